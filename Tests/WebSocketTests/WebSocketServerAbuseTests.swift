import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A `WebSocketListener` (the echo server of the DocC catalog) against a hostile client writing raw
/// bytes over loopback: frames cut anywhere or glued together, lengths no client should send, control
/// frames that break RFC 6455 §5.5, and Close frames with bad bodies (§5.5.1, §7.4). Each bad input ends
/// that connection with the RFC's code in the server's Close frame, and the server goes on.
@Suite(.offThePool) struct WebSocketServerAbuseTests {
    typealias Peer = RawWebSocketPeer

    /// Frames a client may send, one message each with a ping in the middle of a fragmented one:
    /// "Hello", then "€uro" fragmented with the euro sign cut between the fragments and a Ping between
    /// them, then a 200-byte binary (a 16-bit length).
    static let frames: [UInt8] =
        Peer.frame(0x81, Array("Hello".utf8))
        + Peer.frame(0x01, [0xE2, 0x82], key: [1, 2, 3, 4])  // the first two bytes of "€"
        + Peer.frame(0x89, Array("p".utf8), key: [9, 9, 9, 9])
        + Peer.frame(0x80, [0xAC] + Array("uro".utf8), key: [0xFF, 0, 0xFF, 0])
        + Peer.frame(0x82, (0..<200).map { UInt8($0) })

    /// What the echo server answers to ``frames`` sent `times` times: the echoes in order, and the Pongs
    /// (written on the loop at once, while the echoes come from the delegate queue, so each may come
    /// before echoes of messages that arrived before its Ping).
    static func expectEchoes(_ peer: Peer, times: Int = 1) async throws {
        var frames: [(first: UInt8, payload: [UInt8])] = []
        for _ in 0..<4 * times { frames.append(try await peer.readFrame()) }
        #expect(frames.filter { $0.first == 0x8A }.map(\.payload) == Array(repeating: Array("p".utf8), count: times))
        let echoes = frames.filter { $0.first != 0x8A }
        #expect(echoes.map(\.first) == ([0x81, 0x81, 0x82] as [UInt8]).repeated(times))
        let payloads = [Array("Hello".utf8), Array("€uro".utf8), (0..<200).map { UInt8($0) }]
        #expect(echoes.map(\.payload) == payloads.repeated(times))
    }

    @Test func framesWrittenOneByteAtATimeAreEchoedWhole() async throws {
        let server = EchoListenerDelegate()
        let listener = try server.start()
        defer { listener.stop() }
        let peer = try await Peer(port: listener.port)
        defer { peer.close() }
        // Each byte its own write (TCP_NODELAY: most arrive as reads of one byte), so every cut
        // happens: inside the 16-bit length, inside each masking key, inside the euro sign.
        for byte in Self.frames { peer.write([byte]) }
        try await Self.expectEchoes(peer)
    }

    @Test func framesGluedIntoOneWriteAreEchoedInOrder() async throws {
        let server = EchoListenerDelegate()
        let listener = try server.start()
        defer { listener.stop() }
        let peer = try await Peer(port: listener.port)
        defer { peer.close() }
        peer.write(Self.frames + Self.frames)
        try await Self.expectEchoes(peer, times: 2)
    }

    @Test func aCompressedMessageArrivingOneByteAtATimeIsInflatedWhole() async throws {
        let server = EchoListenerDelegate()
        let listener = try server.start { $0.deflate = PerMessageDeflate.ServerConfiguration() }
        defer { listener.stop() }
        let peer = try await Peer(port: listener.port, extensions: "permessage-deflate")
        defer { peer.close() }
        // RFC 7692 §7.2.3.1: "Hello" compressed, a single frame with RSV1 (0xC1), cut everywhere.
        for byte in Peer.frame(0xC1, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]) { peer.write([byte]) }
        // RFC 7692 §7.2.3.2: the same message in two fragments (RSV1 on the first only), glued.
        peer.write(Peer.frame(0x41, [0xF2, 0x48, 0xCD]) + Peer.frame(0x80, [0xC9, 0xC9, 0x07, 0x00]))
        // The echoes, compressed again with no context takeover: the same 7 bytes each time.
        #expect(try await peer.readFrame() == (0xC1, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]))
        #expect(try await peer.readFrame() == (0xC1, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]))
    }

    /// A frame header and the code and reason of the server's Close, for ``aBadFrameFailsOnlyItsConnection(_:)``.
    struct BadFrame: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let error: WebSocketProtocolError
        var testDescription: String { name }
        /// The server's Close frame: the error's code, its description as the reason.
        var expectedClose: String { "\(error.closeCode.rawValue) \(error)" }
        /// What the server's delegate is told.
        var expectedResult: String { "\(error.closeCode.rawValue) \"\(error)\" (not clean)" }
    }

    static let badFrames: [BadFrame] =
        [
            // A 64-bit length of 2^63-1 and one with its top bit set: refused from the header (1009, 1002).
            BadFrame(
                name: "length 2^63-1", bytes: [0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4],
                error: .frameTooLarge(length: UInt64(Int64.max), maxFrameSize: WebSocketFrameDecoder.defaultMaxFrameSize)),
            BadFrame(
                name: "length 2^64-1", bytes: [0x82, 0xFF] + [UInt8](repeating: 0xFF, count: 8) + [1, 2, 3, 4],
                error: .lengthTopBitSet(UInt64.max)),
            // 5 bytes announced with the 64-bit form, and 126 with it (minimal: the 16-bit form).
            BadFrame(name: "length 5 in 64 bits", bytes: [0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4], error: .nonMinimalLength(5)),
            BadFrame(name: "length 126 in 64 bits", bytes: [0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0, 126], error: .nonMinimalLength(126)),
            BadFrame(name: "length 5 in 16 bits", bytes: [0x82, 0xFE, 0, 5], error: .nonMinimalLength(5)),
            // Control frames without FIN (§5.4).
            BadFrame(name: "ping without FIN", bytes: Peer.frame(0x09, [1]), error: .fragmentedControlFrame(.ping)),
            BadFrame(name: "close without FIN", bytes: Peer.frame(0x08, [0x03, 0xE8]), error: .fragmentedControlFrame(.close)),
            BadFrame(name: "pong of 126 bytes", bytes: [0x8A, 0xFE, 0, 126], error: .controlFrameTooLong(length: 126)),
            // Close bodies (§5.5.1, §7.4.1): one byte, a reason that is not UTF-8, or cut inside a character.
            BadFrame(name: "close of 1 byte", bytes: Peer.frame(0x88, [0x03]), error: .closePayloadTooShort),
            BadFrame(
                name: "close reason not UTF-8", bytes: Peer.frame(0x88, Peer.closePayload(1000, [0x6F, 0x6B, 0xC0, 0xAF])),
                error: .invalidCloseReason(offset: 2)),
            BadFrame(
                name: "close reason cut in a character", bytes: Peer.frame(0x88, Peer.closePayload(1000, [0xE2, 0x82])),
                error: .invalidCloseReason(offset: 2))
        ]
        // The codes no endpoint may send (§7.4.1, §7.4.2): 1004, 1005, 1006, 1015 reserved; 999 and 5000 out
        // of range; 1016 and 2999 unassigned by IANA (so not valid on the wire either).
        + [1004, 1005, 1006, 1015, 999, 5000, 1016, 2999, 0, 65535].map { (code: UInt16) in
            BadFrame(name: "close code \(code)", bytes: Peer.frame(0x88, Peer.closePayload(code)), error: .invalidCloseCode(code))
        }

    @Test(arguments: badFrames) func aBadFrameFailsOnlyItsConnection(_ bad: BadFrame) async throws {
        let server = EchoListenerDelegate()
        let listener = try server.start()
        defer { listener.stop() }
        let bystander = try await Peer(port: listener.port)
        defer { bystander.close() }
        let peer = try await Peer(port: listener.port)
        defer { peer.close() }
        peer.write(Peer.frame(0x81, Array("before".utf8)))
        #expect(try await peer.readFrame() == (0x81, Array("before".utf8)))
        // The bad frame with a good one glued behind it: nothing after the bad one is read.
        peer.write(bad.bytes + Peer.frame(0x81, Array("after".utf8)))
        #expect(try await peer.readClose() == bad.expectedClose)
        try await peer.disconnected()
        #expect(try await server.closes.next(within: TestTiming.hangLimit(.seconds(10))) == bad.expectedResult)
        // The other connection goes on.
        bystander.write(Peer.frame(0x81, Array("still here".utf8)))
        #expect(try await bystander.readFrame() == (0x81, Array("still here".utf8)))
    }

    /// Close codes a peer may send (§7.4.1, §7.4.2): echoed in the server's Close, reported clean.
    @Test(arguments: [1000, 1001, 1003, 1011, 1014, 3000, 4999] as [UInt16])
    func aValidCloseCodeIsEchoedAndReported(_ code: UInt16) async throws {
        let server = EchoListenerDelegate()
        let listener = try server.start()
        defer { listener.stop() }
        let peer = try await Peer(port: listener.port)
        defer { peer.close() }
        peer.write(Peer.frame(0x88, Peer.closePayload(code, Array("bye".utf8))))
        #expect(try await peer.readClose() == "\(code) ")
        try await peer.disconnected()
        #expect(try await server.closes.next(within: TestTiming.hangLimit(.seconds(10))) == "\(code) \"bye\" (clean)")
    }
}

extension Array {
    /// This array's elements `times` times over.
    fileprivate func repeated(_ times: Int) -> [Element] { (0..<times).flatMap { _ in self } }
}
