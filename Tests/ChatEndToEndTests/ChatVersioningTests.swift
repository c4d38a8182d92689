import AsyncSocket
@testable import ChatProtocol
import ChatTestSupport
import Foundation
import Testing
import TestSupport

/// One server, both versions: each connection is answered in its own version (LinkCodec's
/// `heartbeatAck(answering:)`, used by LongLinkServer's sessions).
@Suite struct ChatVersioningTests {
    @Test func eachHeartbeatIsAnsweredInItsOwnVersion() async throws {
        let chat = try ChatFixture()
        for (version, codec) in [(UInt8(1), ChatCodec(version: .v1)), (2, ChatCodec(version: .v2))] {
            let peer = RecordingDelegate()
            let socket = TCPSocket(delegate: peer, delegateQueue: DispatchQueue(label: "peer"))
            defer { socket.disconnect() }
            try socket.connect(toHost: "127.0.0.1", onPort: chat.server.port, withTimeout: TestTiming.hangTimeout(5))
            _ = try await peer.events.next()
            socket.write(try codec.encode(codec.heartbeat), withTimeout: -1, tag: 0)
            socket.readData(toLength: 9, withTimeout: -1, tag: 1)
            let reply = try await peer.events.first { if case .read = $0 { true } else { false } }
            #expect(reply.readData.map([UInt8].init) == [0x00, version, 0x00, 0x21, 0x00, 0x00, 0x02, 0x7B, 0x7D])
        }
    }
}
