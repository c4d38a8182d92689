import AsyncSocket
import Foundation
import Testing
import TestSupport

/// `write(copying:_:tag:)` (package): a layer's header and payload staged as one write, reported once
/// with a tag, or never without one (a WebSocket's frames: one request and no delegate call per frame).
@Suite struct TwoPartWriteTests {
    /// Writes `header` and `payload` as one two-part write. Loop thread.
    private static func write(_ header: String, _ payload: String, on socket: TCPSocket, tag: Int?) {
        Array(header.utf8).withUnsafeBytes { head in
            Array(payload.utf8).withUnsafeBytes { socket.write(copying: head, $0, tag: tag) }
        }
    }

    @Test func thePartsGoOutInOrderAndOnlyTaggedWritesAreReported() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.eventLoop.execute {
            Self.write("<1>", "one", on: server, tag: nil)
            Self.write("<2>", "two", on: server, tag: 7)
            Self.write("<3>", "", on: server, tag: nil)
            Self.write("<4>", "four", on: server, tag: nil)
            server.write(Data("!".utf8), withTimeout: -1, tag: 8)
        }
        pair.client.readData(toLength: 23, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await pair.clientDelegate.events.next().description == #"read("<1>one<2>two<3><4>four!", tag: 1)"#)
        let wrote = try await pair.serverDelegate.events.next(2) { !$0.isProgress }
        #expect(wrote.map(\.description) == ["wrote(tag: 7)", "wrote(tag: 8)"])
    }

    /// Unreported writes queued one after another are one request, but never across a startTLS: the
    /// write after it waits for the handshake and goes out encrypted.
    @Test func anUnreportedWriteAfterStartTLSWaitsForTheHandshake() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        pair.client.eventLoop.execute {
            Self.write("STARTTLS", "\r\n", on: pair.client, tag: nil)
            pair.client.startTLS(TLSTests.clientSettings(files))
            Self.write("secret", "\r\n", on: pair.client, tag: nil)
        }
        accepted.readData(to: TCPSocket.crlfData, withTimeout: TestTiming.hangTimeout(5), tag: 10)
        #expect(try await pair.serverDelegate.events.next().description == #"read("STARTTLS\r\n", tag: 10)"#)
        accepted.startTLS(TLSTests.serverSettings(files))
        accepted.readData(to: TCPSocket.crlfData, withTimeout: TestTiming.hangTimeout(5), tag: 11)
        let events = try await pair.serverDelegate.events.next(2) { !$0.isProgress }
        #expect(events.map(\.description) == ["secured", #"read("secret\r\n", tag: 11)"#])
    }

    @Test func onAClosedWriteSideOnlyATaggedWriteIsRejected() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.closeWriteStreamAfterWriting()
        server.eventLoop.execute {
            Self.write("<1>", "dropped", on: server, tag: nil)
            Self.write("<2>", "refused", on: server, tag: 5)
            Self.write("", "", on: server, tag: 6)
        }
        let events = try await pair.serverDelegate.events.next(2) { !$0.isProgress }
        #expect(
            events.map(\.description) == [
                "rejectedWrite(tag: 5, the write stream is closed)", "rejectedWrite(tag: 6, bad parameter: a write needs at least one byte)"
            ])
    }
}
