import Foundation
import SocketFraming
import Testing
import WebSocket

/// What an app's `close(code:reason:)` puts on the wire when its arguments do not fit a Close frame
/// (RFC 6455 §5.5: a control frame's payload is at most 125 bytes, 2 of them the code; §7.4.1: codes
/// 1005, 1006 and 1015 are never sent).
@Suite struct WebSocketAppCloseTests {
    typealias Handler = WebSocketProtocolHandler

    /// The Close frame a server writes for `code` and `reason` bytes (unmasked, a 7-bit length).
    static func closeFrame(_ code: UInt16, _ reason: [UInt8]) -> Data {
        Data([0x88, UInt8(2 + reason.count), UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }

    @Test func aReasonOverTheFramesRoomIsCutToWholeCharactersAndTheCodeStillSent() {
        var handler = Handler(role: .server, keepAlive: nil)
        // 100 "é" (200 bytes of UTF-8): 61 whole ones (122 bytes) fit in the 123 bytes left.
        let outputs = handler.close(code: .normalClosure, reason: String(repeating: "é", count: 100))
        #expect(outputs.first == .write(Self.closeFrame(1000, Array(String(repeating: "é", count: 61).utf8))))
    }

    @Test func aReasonOfExactly123BytesIsSentWhole() {
        var handler = Handler(role: .server, keepAlive: nil)
        let reason = String(repeating: "r", count: 123)
        #expect(handler.close(code: .goingAway, reason: reason).first == .write(Self.closeFrame(1001, Array(reason.utf8))))
    }

    /// A code no endpoint may send is not sent: a Close with no body (as for a nil code), which the
    /// peer reports as 1005.
    @Test(arguments: [1005, 1006, 1015, 999] as [UInt16])
    func aCodeThatIsNeverSentGivesACloseWithNoBody(_ code: UInt16) {
        var handler = Handler(role: .server, keepAlive: nil)
        #expect(handler.close(code: WebSocketCloseCode(rawValue: code), reason: "x").first == .write(Data([0x88, 0x00])))
    }
}
