import Foundation

/// Checks that bytes are well-formed UTF-8, a piece at a time: a sequence may be split across pieces,
/// and the first byte that cannot belong to well-formed UTF-8 is reported as soon as it is seen.
///
/// The rules are the Unicode Standard's table of well-formed byte sequences (Unicode 15, §3.9, Table 3-7),
/// so overlong forms (C0, C1, E0 80–9F, F0 80–8F), surrogates (ED A0–BF: U+D800–DFFF) and code points
/// over U+10FFFF (F4 90–BF, F5–FF) are refused:
///
/// | first byte | second | third | fourth |
/// | --- | --- | --- | --- |
/// | 00–7F | | | |
/// | C2–DF | 80–BF | | |
/// | E0 | A0–BF | 80–BF | |
/// | E1–EC, EE–EF | 80–BF | 80–BF | |
/// | ED | 80–9F | 80–BF | |
/// | F0 | 90–BF | 80–BF | 80–BF |
/// | F1–F3 | 80–BF | 80–BF | 80–BF |
/// | F4 | 80–8F | 80–BF | 80–BF |
///
/// A WebSocket text message is checked fragment by fragment with one validator (RFC 6455 §8.1, fail fast);
/// at its end ``isAtCharacterBoundary`` must be true, or it ends inside a sequence. Runs of ASCII are
/// checked 8 bytes at a time.
public struct UTF8Validator: Hashable, Sendable {
    /// Bytes still expected to complete the current sequence: 0 between characters.
    private var remaining: UInt8 = 0
    /// The range the next byte must be in while `remaining > 0` (Table 3-7's second-byte ranges, then
    /// 80–BF).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// A validator at the start of the text.
    public init() {}

    /// Whether the bytes so far end between two characters, not inside a sequence: true when the text may
    /// end here.
    public var isAtCharacterBoundary: Bool { remaining == 0 }

    /// Checks the next `bytes` of the text. Returns nil if they are well-formed so far (a sequence may be
    /// left open for the next piece), or the index in `bytes` of the first byte that cannot be. After a
    /// non-nil result the validator's state is unspecified: start a new one.
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            if remaining == 0 {
                // ASCII runs, 8 bytes at a time.
                while index + 8 <= count,
                    bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                guard index < count else { break }
                let byte = bytes[index]
                if byte < 0x80 {
                    index += 1
                    continue
                }
                guard start(byte) else { return index }
            } else {
                let byte = bytes[index]
                guard byte >= lower, byte <= upper else { return index }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
            }
            index += 1
        }
        return nil
    }

    /// `validate(_:)` for the bytes of `data`.
    public mutating func validate(_ data: Data) -> Int? {
        data.withUnsafeBytes { validate($0) }
    }

    /// Whether `bytes` are, all of them, well-formed UTF-8 text.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) == nil && validator.isAtCharacterBoundary
    }

    /// Whether `data` is, all of it, well-formed UTF-8 text.
    public static func isValid(_ data: Data) -> Bool {
        data.withUnsafeBytes { isValid($0) }
    }

    /// Begins the sequence whose first byte is `byte` (80–FF), setting the range of its second byte;
    /// false if no sequence starts with it (80–C1, F5–FF).
    private mutating func start(_ byte: UInt8) -> Bool {
        switch byte {
        case 0xC2...0xDF: begin(1, 0x80, 0xBF)
        case 0xE0: begin(2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: begin(2, 0x80, 0xBF)
        case 0xED: begin(2, 0x80, 0x9F)
        case 0xF0: begin(3, 0x90, 0xBF)
        case 0xF1...0xF3: begin(3, 0x80, 0xBF)
        case 0xF4: begin(3, 0x80, 0x8F)
        default: return false
        }
        return true
    }

    private mutating func begin(_ continuationBytes: UInt8, _ lower: UInt8, _ upper: UInt8) {
        remaining = continuationBytes
        self.lower = lower
        self.upper = upper
    }
}
