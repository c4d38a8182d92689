import Foundation
import SocketFraming

/// A frame as the fuzzing peer writes it, rules or not: any opcode (the reserved ones too), any reserved
/// bits, FIN as given, any payload length (a control frame over 125 bytes too). Lengths are written in
/// their minimal encoding (RFC 6455 §5.2); a fuzzing client masks with a fresh key (§5.3).
struct FuzzFrame: Sendable {
    var fin = true
    /// RSV1–RSV3 as Autobahn numbers them: bit 4 RSV1, 2 RSV2, 1 RSV3 (shifted into bits 0x70 of byte 0).
    var rsv: UInt8 = 0
    /// 0x0–0xF.
    var opcode: UInt8
    var payload: Data

    static func text(_ text: String, fin: Bool = true, rsv: UInt8 = 0) -> FuzzFrame {
        FuzzFrame(fin: fin, rsv: rsv, opcode: 0x1, payload: Data(text.utf8))
    }
    static func text(bytes: Data, fin: Bool = true) -> FuzzFrame { FuzzFrame(fin: fin, opcode: 0x1, payload: bytes) }
    static func binary(_ data: Data, fin: Bool = true, rsv: UInt8 = 0) -> FuzzFrame {
        FuzzFrame(fin: fin, rsv: rsv, opcode: 0x2, payload: data)
    }
    static func continuation(_ text: String, fin: Bool) -> FuzzFrame {
        FuzzFrame(fin: fin, opcode: 0x0, payload: Data(text.utf8))
    }
    static func continuation(bytes: Data, fin: Bool) -> FuzzFrame { FuzzFrame(fin: fin, opcode: 0x0, payload: bytes) }
    static func ping(_ text: String = "", fin: Bool = true) -> FuzzFrame { FuzzFrame(fin: fin, opcode: 0x9, payload: Data(text.utf8)) }
    static func ping(bytes: Data) -> FuzzFrame { FuzzFrame(opcode: 0x9, payload: bytes) }
    static func pong(_ text: String = "", fin: Bool = true) -> FuzzFrame { FuzzFrame(fin: fin, opcode: 0xA, payload: Data(text.utf8)) }
    /// A Close with `code` (nil: no payload) and `reason`'s bytes.
    static func close(_ code: UInt16?, reason: Data = Data(), rsv: UInt8 = 0) -> FuzzFrame {
        FuzzFrame(rsv: rsv, opcode: 0x8, payload: code.map { closePayload($0) + reason } ?? Data())
    }
    static func close(_ code: UInt16, reason: String) -> FuzzFrame { close(code, reason: Data(reason.utf8)) }
    /// A frame with opcode `opcode` (reserved ones included).
    static func opcode(_ opcode: UInt8, _ text: String = "") -> FuzzFrame { FuzzFrame(opcode: opcode, payload: Data(text.utf8)) }

    /// A close frame's payload: `code` in network byte order.
    static func closePayload(_ code: UInt16) -> Data { Data([UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]) }

    /// The frame's bytes on the wire, masked with `key` if given, and the offsets where ``FuzzArrival/splitInside``
    /// cuts it (inside the header, inside the key or the extended length, inside the first multi-byte
    /// UTF-8 sequence of a text or continuation payload), counted from the frame's first byte, and where
    /// the payload starts.
    func encoded(maskingKey key: WebSocketMaskingKey?) -> (bytes: Data, cuts: [Int], payloadStart: Int) {
        var bytes = Data([(fin ? 0x80 : 0) | (rsv & 7) << 4 | (opcode & 0x0F)])
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        let length = payload.count
        if length <= 125 {
            bytes.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes.append(contentsOf: [maskBit | 126, UInt8(length >> 8), UInt8(truncatingIfNeeded: length)])
        } else {
            bytes.append(maskBit | 127)
            bytes.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(length) >> (8 * UInt64($0))) })
        }
        var cuts = [1]
        if bytes.count > 2 { cuts.append(3) }  // inside the extended length
        if let key {
            cuts.append(bytes.count + 2)  // inside the masking key
            bytes.append(contentsOf: key.bytes)
        }
        let payloadStart = bytes.count
        if opcode <= 0x1, let lead = payload.firstIndex(where: { $0 >= 0xC0 }) {
            cuts.append(payloadStart + (lead - payload.startIndex) + 1)
        }
        bytes.append(payload)
        if let key {
            bytes.withUnsafeMutableBytes { all in key.apply(to: UnsafeMutableRawBufferPointer(rebasing: all[payloadStart...])) }
        }
        return (bytes, cuts.filter { $0 > 0 && $0 < bytes.count }, payloadStart)
    }

    /// `"Hello"` for short UTF-8, else the length and the first bytes in hexadecimal.
    static func summary(_ data: Data) -> String {
        if data.count <= 40, let text = String(data: data, encoding: .utf8), !text.contains(where: \.isNewline) {
            return "\"\(text)\""
        }
        return "\(data.count) bytes " + data.prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}

extension Data {
    /// `count` copies of `pattern`'s bytes, cut to `count` bytes (Autobahn's `payload_len`).
    init(repeating pattern: String, count: Int) { self.init(repeating: Array(pattern.utf8), count: count) }

    /// `count` copies of `pattern`, cut to `count` bytes; filled through a raw buffer (a debug build's
    /// per-element loops cost seconds over the megabytes of group 9).
    init(repeating pattern: [UInt8], count: Int) {
        self.init(count: count)
        withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self), !pattern.isEmpty else { return }
            pattern.withUnsafeBufferPointer { unit in
                guard let unitBase = unit.baseAddress else { return }
                var offset = 0
                while offset < count {
                    let piece = Swift.min(unit.count, count - offset)
                    (base + offset).update(from: unitBase, count: piece)
                    offset += piece
                }
            }
        }
    }

    /// The bytes `hex` spells, two digits a byte ("cebae1").
    init(hex: String) {
        let digits = Array(hex.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < digits.count {
            bytes.append(UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
            index += 2
        }
        self.init(bytes)
    }
}
