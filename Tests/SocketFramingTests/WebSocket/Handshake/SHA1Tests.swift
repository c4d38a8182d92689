import Foundation
import Testing

@testable import SocketFraming

/// SHA-1 against RFC 3174 §7.3's test vectors, and the accept value of RFC 6455 §1.3.
@Suite struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    @Test func rfc3174_test_vectors() {
        #expect(Self.hex(SHA1.hash(utf8("abc"))) == "A9993E364706816ABA3E25717850C26C9CD0D89D")
        #expect(
            Self.hex(SHA1.hash(utf8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
                == "84983E441C3BD26EBAAE4AA1F95129E5E54670F1")
        #expect(Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34AA973CD4C4DAA4F61EEB2BDBAD27316534016F")
        let sixtyFour = String(repeating: "01234567", count: 8)
        #expect(Self.hex(SHA1.hash(utf8(String(repeating: sixtyFour, count: 10)))) == "DEA356A2CDDD90C7A7ECEDC5EBB563934F460452")
    }

    @Test func empty_and_padding_boundary_messages() {
        #expect(Self.hex(SHA1.hash([])) == "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709")
        // 55 and 56 bytes: the length still fits the first block, and no longer does.
        #expect(Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 55))) == "C1C8BBDC22796E28C0E15163D20899B65621D65A")
        #expect(Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 56))) == "C2DB330F6083854C99D4B5BFB6E8F29F201BE699")
    }

    @Test func the_rfc6455_accept_value() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func keys_are_the_base64_of_16_bytes() {
        #expect(WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ==="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZSE="))  // 17 bytes
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25j*Q=="))
        let key = WebSocketHandshake.randomKey()
        #expect(WebSocketHandshake.isValidKey(key))
        #expect(key != WebSocketHandshake.randomKey())
    }
}
