import Foundation

/// The constants and the key arithmetic of WebSocket's opening handshake (RFC 6455 §4), shared by the
/// server's and the client's side.
public enum WebSocketHandshake {
    /// The one protocol version of RFC 6455, sent as `Sec-WebSocket-Version: 13` (§4.1, §11.6).
    public static let version = "13"

    /// The GUID appended to the key before hashing (RFC 6455 §1.3, §4.2.2).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for `key`: base64(SHA-1(key + GUID)) (RFC 6455 §4.2.2 item 5.4). The key is
    /// used as the 24 characters received, not decoded: `dGhlIHNhbXBsZSBub25jZQ==` gives
    /// `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=` (§1.3).
    public static func acceptValue(forKey key: String) -> String {
        Data(SHA1.hash(Array((key + guid).utf8))).base64EncodedString()
    }

    /// Whether `key` is a valid `Sec-WebSocket-Key` (RFC 6455 §4.1 item 7, §4.2.1 item 5): the base64
    /// (RFC 4648 §4, with padding) of exactly 16 bytes, i.e. 22 base64 characters and `==`.
    public static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        guard bytes[..<22].allSatisfy(isBase64Character) else { return false }
        return Data(base64Encoded: key)?.count == 16
    }

    /// A fresh key: 16 bytes from the system's random number generator, in base64 (RFC 6455 §4.1 item 7).
    public static func randomKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }

    private static func isBase64Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}
