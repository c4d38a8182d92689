import Foundation
import SocketFraming
import Testing

/// `WebSocketClosePayload` and `WebSocketCloseCode` (RFC 6455 §5.5.1, §7.4; the IANA registry).
@Suite struct WebSocketClosePayloadTests {
    static let validCodes: [UInt16] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
    static let invalidCodes: [UInt16] = [0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]

    @Test func the_codes_valid_on_the_wire_are_those_of_rfc_6455_and_the_iana_registry() {
        for code in Self.validCodes { #expect(WebSocketCloseCode(rawValue: code).isValidOnWire, "\(code)") }
        for code in Self.invalidCodes { #expect(!WebSocketCloseCode(rawValue: code).isValidOnWire, "\(code)") }
        let valid = (0...UInt16.max).filter { WebSocketCloseCode(rawValue: $0).isValidOnWire }
        #expect(valid.count == 4 + 8 + 2000)
    }

    @Test(arguments: validCodes)
    func a_valid_code_is_received_and_sent(code: UInt16) throws {
        let payload = Data([UInt8(code >> 8), UInt8(code & 0xFF)]) + Data("why".utf8)
        let close = try WebSocketClosePayload(payload: payload)
        #expect(close == WebSocketClosePayload(code: WebSocketCloseCode(rawValue: code), reason: "why"))
        #expect(try close.payload() == payload)
    }

    @Test(arguments: invalidCodes)
    func an_invalid_code_is_refused_both_ways_with_1002(code: UInt16) {
        let payload = Data([UInt8(code >> 8), UInt8(code & 0xFF)])
        #expect(throws: WebSocketProtocolError.invalidCloseCode(code)) { try WebSocketClosePayload(payload: payload) }
        #expect(throws: WebSocketProtocolError.invalidCloseCode(code)) {
            try WebSocketClosePayload(code: WebSocketCloseCode(rawValue: code)).payload()
        }
        #expect(WebSocketProtocolError.invalidCloseCode(code).closeCode == .protocolError)
    }

    @Test func payloads_of_0_and_1_byte() throws {
        #expect(try WebSocketClosePayload(payload: Data()) == .empty)
        #expect(WebSocketClosePayload.empty.code == nil)
        #expect(try WebSocketClosePayload.empty.payload() == Data())
        #expect(throws: WebSocketProtocolError.closePayloadTooShort) { try WebSocketClosePayload(payload: Data([0x03])) }
        #expect(WebSocketProtocolError.closePayloadTooShort.closeCode == .protocolError)
    }

    @Test func the_reason_must_be_utf8_and_fit_in_123_bytes() throws {
        let bad = Data([0x03, 0xE8, 0x61, 0xED, 0xA0, 0x80])
        #expect(throws: WebSocketProtocolError.invalidCloseReason(offset: 2)) { try WebSocketClosePayload(payload: bad) }
        #expect(throws: WebSocketProtocolError.invalidCloseReason(offset: 2)) {
            try WebSocketClosePayload(payload: Data([0x03, 0xE8, 0x61, 0xCE]))
        }
        #expect(WebSocketProtocolError.invalidCloseReason(offset: 2).closeCode == .invalidPayloadData)
        let close = try WebSocketClosePayload(payload: Data([0x03, 0xE8]) + Data("κόσμε".utf8))
        #expect(close.reason == "κόσμε" && close.description == "1000 \"κόσμε\"")
        #expect(try WebSocketClosePayload(code: .goingAway, reason: String(repeating: "a", count: 123)).payload().count == 125)
        #expect(throws: WebSocketProtocolError.closeReasonTooLong(length: 124)) {
            try WebSocketClosePayload(code: .goingAway, reason: String(repeating: "a", count: 124)).payload()
        }
    }

    @Test func a_payload_slice_parses_from_its_own_start() throws {
        let whole = Data([0xFF, 0xFF, 0x0B, 0xB8, 0x6F, 0x6B])
        #expect(try WebSocketClosePayload(payload: whole.dropFirst(2)) == WebSocketClosePayload(code: .init(rawValue: 3000), reason: "ok"))
    }
}
