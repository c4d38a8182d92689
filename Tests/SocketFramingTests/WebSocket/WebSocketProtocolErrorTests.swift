import Foundation
import SocketFraming
import Testing

/// Every `WebSocketProtocolError` case: its close code and its description.
@Suite struct WebSocketProtocolErrorTests {
    static let table: [(WebSocketProtocolError, UInt16, String)] = [
        (.reservedOpcode(0xB), 1002, "reserved opcode 0xB"),
        (.reservedBitsSet([.rsv1, .rsv3]), 1002, "reserved bits [rsv1, rsv3] set without an extension that claims them"),
        (.fragmentedControlFrame(.ping), 1002, "ping frame without FIN: control frames cannot be fragmented"),
        (.controlFrameTooLong(length: 126), 1002, "control frame payload of 126 bytes exceeds 125 bytes"),
        (.nonMinimalLength(125), 1002, "payload length 125 not in its minimal encoding"),
        (.lengthTopBitSet(1 << 63), 1002, "64-bit payload length 9223372036854775808 has its most significant bit set"),
        (.unmaskedFrame, 1002, "unmasked frame from a client"),
        (.maskedFrame, 1002, "masked frame from a server"),
        (.frameTooLarge(length: 17, maxFrameSize: 16), 1009, "frame payload of 17 bytes exceeds the maximum frame size of 16 bytes"),
        (.messageTooLarge(length: 11, maxMessageSize: 10), 1009, "message of 11 bytes exceeds the maximum message size of 10 bytes"),
        (.unexpectedContinuation, 1002, "continuation frame without a message to continue"),
        (.dataFrameInsideMessage(.text), 1002, "text frame before the open message's last fragment"),
        (.invalidUTF8(offset: 12), 1007, "text message is not valid UTF-8 at byte 12"),
        (.closePayloadTooShort, 1002, "close frame payload of 1 byte"),
        (.invalidCloseCode(1005), 1002, "close code 1005 is not valid on the wire"),
        (.invalidCloseReason(offset: 2), 1007, "close reason is not valid UTF-8 at byte 2"),
        (.closeReasonTooLong(length: 124), 1002, "close reason of 124 bytes exceeds 123 bytes"),
        (.truncatedFrame(bufferedBytes: 3), 1006, "stream ended inside a frame, 3 bytes of it received")
    ]

    @Test func every_case_has_its_close_code_and_description() {
        for (error, code, description) in Self.table {
            #expect(error.closeCode.rawValue == code, "\(error)")
            #expect(error.description == description)
        }
    }

    @Test func frames_and_codes_describe_themselves() {
        let frame = WebSocketFrame(opcode: .text, maskingKey: WebSocketMaskingKey(rawValue: 0x37FA_213D), payload: data("Hello"))
        #expect(frame.description == "text fin 5 bytes masked 37 fa 21 3d")
        #expect(WebSocketFrame(fin: false, reservedBits: .rsv1, opcode: .binary).description == "binary [rsv1] 0 bytes")
        #expect(WebSocketCloseCode.normalClosure.description == "1000")
        #expect(WebSocketClosePayload.empty.description == "no status")
        #expect(WebSocketOpcode.allCases.filter(\.isControl) == [.close, .ping, .pong])
    }
}
