import AsyncSocket
import FramedSocket
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport

/// A bare connection to a ``TextCodec`` server that sends whatever bytes a test gives it and reads the
/// server's frames as text (nil once the server has closed the connection).
final class RawTextPeer: @unchecked Sendable {
    let connection: TCPConnection
    private var frames: FrameSequence<LengthFieldBasedFrameDecoder>.AsyncIterator

    init(port: UInt16) async throws {
        connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5))
        frames = connection.frames(decodedWith: TextCodec().makeDecoder()).makeAsyncIterator()
    }

    func send(_ bytes: Data) async throws { try await connection.write(bytes, timeout: .seconds(5)) }

    /// The next frame as text; nil when the server closed the connection.
    func next() async throws -> String? {
        try await frames.next().map { String(decoding: $0, as: UTF8.self) }
    }

    /// A heartbeat and its answer: the server has handled everything sent before (the bytes of an
    /// unfinished frame written with it included).
    func roundTrip(after bytes: Data = Data()) async throws -> String? {
        try await send(bytes + TextCodec.frame("PING"))
        return try await next()
    }
}

/// The server's limits (issue 12) on the harness's manual clock: connections, admission, unfinished
/// frames, bad frames, unencodable messages, and the graceful shutdown.
@Suite struct LongLinkServerLimitsTests {
    @Test func aConnectionOverTheLimitIsToldServerFullAndClosedAndTheOthersGoOn() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.maxConnections = 2 }
        defer { server.stop() }
        let first = try await RawTextPeer(port: server.port)
        #expect(try await first.roundTrip() == "PONG")  // a session now
        let second = try await RawTextPeer(port: server.port)
        #expect(try await second.roundTrip() == "PONG")
        let third = try await RawTextPeer(port: server.port)
        #expect(try await third.next() == "BYE: server full (2 connections)")
        #expect(try await third.next() == nil)
        #expect(try await harness.serverEvents.next(3) == ["opened", "opened", "refused (server full (2 connections))"])
        try await first.send(TextCodec.frame("still here"))
        #expect(try await first.next() == "echo: still here")
        #expect(server.sessions.count == 2)
        // A session that ends makes room.
        await first.connection.close()
        #expect(try await harness.serverEvents.next(2) == ["received still here", "closed (closed by client)"])
        let fourth = try await RawTextPeer(port: server.port)
        #expect(try await fourth.roundTrip() == "PONG")
    }

    @Test func aSessionNotAdmittedInTimeIsToldAndClosedThoughItSendsHeartbeats() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.admissionTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        #expect(try await peer.roundTrip() == "PONG")
        await harness.advance(by: .seconds(5))
        #expect(try await peer.roundTrip() == "PONG")
        await harness.advance(by: .milliseconds(4_999))
        #expect(try await peer.roundTrip() == "PONG")
        await harness.advance(by: .milliseconds(1))
        #expect(try await peer.next() == "BYE: not admitted within 10 s")
        #expect(try await peer.next() == nil)
        #expect(try await harness.serverEvents.next(2) == ["opened", "closed (admission timeout)"])
    }

    @Test func anAdmittedSessionOutlivesTheAdmissionDeadline() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.admissionTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        try await peer.send(TextCodec.frame("admit me"))
        #expect(try await peer.next() == "echo: admit me")
        await harness.advance(by: .seconds(60))
        #expect(try await peer.roundTrip() == "PONG")
        #expect(server.sessions.count == 1)
    }

    /// Regression (ClientPresenceTests under ThreadSanitizer: 18 of 100 logins accepted and then
    /// dropped for "login timeout"): an admission granted while its deadline's timer was already due
    /// in the same pass of the loop, the cancel still queued behind it, closed the admitted session.
    @Test func anAdmissionGrantedAsItsDeadlineFiresKeepsTheSession() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.admissionTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        #expect(try await peer.roundTrip() == "PONG")
        let session = try #require(server.sessions.first)
        // Due 1 ms before the deadline, and run by the loop in the same pass as the deadline's timer.
        _ = harness.group.next().scheduleTask(in: .milliseconds(9_999)) { session.admit() }
        await harness.advance(by: .seconds(10))
        #expect(try await peer.roundTrip() == "PONG")
        await harness.advance(by: .seconds(60))
        #expect(try await peer.roundTrip() == "PONG")
        #expect(harness.serverEvents.all == ["opened"])
    }

    @Test func anAdmissionWithdrawnStartsAWholeDeadlineAgain() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.admissionTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        await harness.advance(by: .seconds(5))
        try await peer.send(TextCodec.frame("admit me"))
        #expect(try await peer.next() == "echo: admit me")
        await harness.advance(by: .seconds(3))
        try await peer.send(TextCodec.frame("withdraw"))
        #expect(try await peer.next() == "echo: withdraw")
        await harness.advance(by: .milliseconds(9_999))  // 17.999 s from the connect
        #expect(try await peer.roundTrip() == "PONG")
        await harness.advance(by: .milliseconds(1))
        #expect(try await peer.next() == "BYE: not admitted within 10 s")
        #expect(try await peer.next() == nil)
    }

    @Test func aStartedFrameNotFinishedInTimeIsToldAndClosedTrickleOrNot() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.frameTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        // A header announcing 100 bytes and 2 of them, read by the server with the heartbeat before them.
        #expect(try await peer.roundTrip(after: Data()) == "PONG")
        try await peer.send(TextCodec.frame("PING") + Data([0, 0, 0, 100, 0x61, 0x62]))
        #expect(try await peer.next() == "PONG")
        await harness.advance(by: .seconds(6))
        try await peer.send(Data([0x63]))  // a trickle does not move the deadline
        await harness.advance(by: .milliseconds(3_999))
        await harness.drainEventQueues()
        #expect(harness.serverEvents.all == ["opened"])
        await harness.advance(by: .milliseconds(1))
        #expect(try await peer.next() == "BYE: frame not finished within 10 s")
        #expect(try await peer.next() == nil)
        #expect(try await harness.serverEvents.next(2) == ["opened", "closed (frame timeout)"])
    }

    @Test func theFrameDeadlineRunsFromTheFirstByteOfEachFrame() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.frameTimeout = .seconds(10) }
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        let whole = TextCodec.frame("first")
        // The first frame starts at 0 s and ends at 9 s, with the start of the next one.
        try await peer.send(TextCodec.frame("PING") + whole.prefix(5))
        #expect(try await peer.next() == "PONG")
        await harness.advance(by: .seconds(9))
        try await peer.send(whole.dropFirst(5) + Data([0, 0, 0, 9]))
        #expect(try await peer.next() == "echo: first")
        await harness.advance(by: .milliseconds(9_999))
        await harness.drainEventQueues()
        #expect(harness.serverEvents.all == ["opened", "received first"])
        await harness.advance(by: .milliseconds(1))
        #expect(try await peer.next() == "BYE: frame not finished within 10 s")
        #expect(try await harness.serverEvents.next(3) == ["opened", "received first", "closed (frame timeout)"])
    }

    @Test func withoutAFrameTimeoutAPartialFrameWaitsForTheIdleTimeout() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(idleTimeout: .seconds(30))
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        try await peer.send(TextCodec.frame("PING") + Data([0, 0, 0, 100]))
        #expect(try await peer.next() == "PONG")
        await harness.advance(by: .seconds(29))
        await harness.drainEventQueues()
        #expect(harness.serverEvents.all == ["opened"])
        await harness.advance(by: .seconds(1))
        #expect(try await harness.serverEvents.next(2) == ["opened", "closed (idle timeout)"])
    }

    @Test func aBadFrameIsToldAsAProtocolErrorBeforeTheClose() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        defer { server.stop() }
        // A frame that decodes but is not text.
        let notText = try await RawTextPeer(port: server.port)
        try await notText.send(try LengthFieldPrepender(lengthFieldLength: 4).encode(Data([0xFF, 0xFE])))
        #expect(try await notText.next() == "BYE: protocol error: not UTF-8 text")
        #expect(try await notText.next() == nil)
        #expect(try await harness.serverEvents.next(2) == ["opened", "closed (protocol error: not UTF-8 text)"])
        // A header over the frame limit: refused as soon as it is in, before any of the body.
        let tooLong = try await RawTextPeer(port: server.port)
        try await tooLong.send(TextCodec.frame("fine") + Data([0x80, 0, 0, 0]))
        let echo = try await tooLong.next()
        #expect(echo == "echo: fine")
        let why = "frame of 2147483652 bytes exceeds the maximum frame length of 65536 bytes"
        let bye = try await tooLong.next()
        #expect(bye == "BYE: protocol error: \(why)")
        #expect(try await tooLong.next() == nil)
        #expect(try await harness.serverEvents.next(3) == ["opened", "received fine", "closed (protocol error: \(why))"])
    }

    @Test func aMessageThatCannotBeEncodedIsReportedNotDroppedSilently() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        defer { server.stop() }
        let peer = try await RawTextPeer(port: server.port)
        #expect(try await peer.roundTrip() == "PONG")
        #expect(try await harness.serverEvents.next() == "opened")
        let session = try #require(server.sessions.first)
        session.send("unencodable one")
        server.broadcast("unencodable all")
        server.send("unencodable none", to: [])
        #expect(
            try await harness.serverEvents.next(3) == [
                "send failed to [1]: unencodable one (cannot encode: not UTF-8 text)",
                "send failed to [1]: unencodable all (cannot encode: not UTF-8 text)",
                "send failed to []: unencodable none (cannot encode: not UTF-8 text)"
            ])
        session.send("fine")
        #expect(try await peer.next() == "fine")
    }

    @Test func shutDownTellsEverySessionAfterWhatWasSentAndReportsWhenAllHaveClosed() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        var peers: [RawTextPeer] = []
        for _ in 0..<2 {
            let peer = try await RawTextPeer(port: server.port)
            #expect(try await peer.roundTrip() == "PONG")
            peers.append(peer)
        }
        #expect(try await harness.serverEvents.next(2) == ["opened", "opened"])
        let told = EventRecorder<Int>()
        server.broadcast("last words")
        server.shutDown { told.record($0) }
        for peer in peers {
            #expect(try await peer.next() == "last words")
            #expect(try await peer.next() == "BYE: server shutting down")
            #expect(try await peer.next() == nil)
        }
        #expect(try await told.next() == 2)
        #expect(try await harness.serverEvents.next(2) == ["closed (server shutting down)", "closed (server shutting down)"])
        #expect(server.sessions.isEmpty)
    }

    @Test func shutDownWithNoSessionCompletesAtOnce() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        let told = EventRecorder<Int>()
        server.shutDown { told.record($0) }
        #expect(try await told.next() == 0)
    }

    @Test func aClientToldTheServerIsGoingAwayStartsItsReconnectScheduleOver() async throws {
        let harness = LinkHarness()
        let port = ReservedLoopbackPort(sharedWithServer: true)
        let server = try harness.makeServer(port: port.port, reusePort: true)
        port.release()
        let client = harness.makeClient(port: port.port) { $0.linkHealthyAfter = .seconds(600) }
        defer { client.disconnect() }
        client.connect()
        let connected = "connected to 127.0.0.1:\(port.port)"
        #expect(try await harness.clientEvents.next() == connected)
        // A first drop: attempt 1 reconnects; the link is not healthy yet, so a second drop would be attempt 2, in 2 s.
        server.sessions.forEach { $0.close() }
        #expect(try await harness.clientEvents.next(3) == ["disconnected (by server)", "reconnect attempt 1 in 0 s", connected])
        _ = try await harness.serverEvents.next(3)  // opened, closed, opened
        let told = EventRecorder<Int>()
        server.shutDown { told.record($0) }
        #expect(try await told.next() == 1)
        // Told the server is going away: attempt 1 again, at once.
        #expect(
            try await harness.clientEvents.next(3) == [
                "received BYE: server shutting down", "disconnected (by server)", "reconnect attempt 1 in 0 s"
            ])
        // Nothing listens now: that attempt fails, and the schedule goes on from there.
        let failed = try await harness.clientEvents.next(2)
        #expect(failed.first?.hasPrefix("connect failed: ") == true)
        #expect(failed.last == "reconnect attempt 2 in 2 s")
    }
}
