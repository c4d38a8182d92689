extension KeyValueBucket {
    /// Whether NATS KV accepts `key` (libnats' `validKey`, kv.c): one or more of
    /// `[-/_=.a-zA-Z0-9]`, no `.` first, last, or after another `.`. (libnats also lets `\` through;
    /// other clients do not, so this API does not.)
    public static func isValidKey(_ key: String) -> Bool {
        guard !key.isEmpty, key.first != ".", key.last != ".", !key.contains("..") else { return false }
        return key.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "/"),
                UInt8(ascii: "_"), UInt8(ascii: "="), UInt8(ascii: "."):
                true
            default:
                false
            }
        }
    }

    /// A valid key for any text, reversibly: the lowercase hex of its UTF-8 bytes ("alice" →
    /// "616c696365"); "" becomes "=" (hex never contains `=`). ``decodeKey(_:)`` reverses it.
    public static func encodeKey(_ text: String) -> String {
        guard !text.isEmpty else { return "=" }
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(text.utf8.count * 2)
        for byte in text.utf8 {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The text ``encodeKey(_:)`` made `key` from, or nil when `key` is not such an encoding
    /// (odd length, not lowercase hex, or not UTF-8).
    public static func decodeKey(_ key: String) -> String? {
        if key == "=" { return "" }
        let hex = Array(key.utf8)
        guard !hex.isEmpty, hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index < hex.count {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Throws ``NATSError/invalid(_:)`` unless ``isValidKey(_:)``.
    static func validate(_ key: String) throws(NATSError) {
        guard isValidKey(key) else {
            throw .invalid("KV key \"\(key)\" must be [-/_=.a-zA-Z0-9]+ without leading, trailing or double dots; see encodeKey(_:)")
        }
    }
}
