import AsyncSocket
import Dispatch
import Foundation
import LongLink
import TestSupport

/// A client and a server on loopback, both on event loops driven by one manual clock, recording events
/// as strings.
final class LinkHarness: Sendable {
    let clock = ManualClock()
    let group: EventLoopGroup
    let clientEvents = EventRecorder<String>()
    let serverEvents = EventRecorder<String>()
    let clientQueue = DispatchQueue(label: "client-events")
    let serverQueue = DispatchQueue(label: "server-events")

    init() {
        group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "harness")
    }

    /// A server that echoes every message back to its sender as "echo: …".
    /// `configure` may set the limits (``LongLinkServer/Configuration/maxConnections``, …). A message
    /// "admit me" is admitted (``LongLinkServer/Session/admit()``) before its echo, "withdraw" has its
    /// admission required again (``LongLinkServer/Session/requireAdmission()``).
    func makeServer(
        port: UInt16 = 0, idleTimeout: Duration = .seconds(360), maxQueuedBytes: Int = 4 << 20, reusePort: Bool = false,
        configure: (inout LongLinkServer<TextCodec>.Configuration) -> Void = { _ in }
    ) throws -> LongLinkServer<TextCodec> {
        var configuration = LongLinkServer<TextCodec>.Configuration(port: port)
        configuration.isReusePortEnabled = reusePort
        configuration.idleTimeout = idleTimeout
        configuration.maxQueuedBytesPerSession = maxQueuedBytes
        configure(&configuration)
        let events = serverEvents
        let server = LongLinkServer(codec: TextCodec(), configuration: configuration, group: group, eventQueue: serverQueue) { event in
            switch event {
            case .opened: events.record("opened")
            case .received(let message, let session):
                events.record("received \(message)")
                if message == "admit me" { session.admit() }
                if message == "withdraw" { session.requireAdmission() }
                session.send("echo: \(message)")
            case .closed(_, let reason): events.record("closed (\(reason))")
            case .refused(_, let refusal): events.record("refused (\(refusal))")
            case .sendFailed(let message, let reason, let sessions):
                events.record("send failed to \(sessions.map(\.id)): \(message) (\(reason))")
            }
        }
        try server.start()
        return server
    }

    /// A client of `port`. Its reconnect jitter always draws 0, so delays are the exact base delays
    /// (0 s, 2 s, 4 s) unless `configure` sets another ``ReconnectSchedule/random``.
    func makeClient(
        port: UInt16, configure: (inout LongLinkClient<TextCodec>.Configuration) -> Void = { _ in }
    ) -> LongLinkClient<TextCodec> {
        var configuration = LongLinkClient<TextCodec>.Configuration(host: "127.0.0.1", port: port)
        configuration.reconnectSchedule.random = { 0 }
        configure(&configuration)
        let events = clientEvents
        return LongLinkClient(codec: TextCodec(), configuration: configuration, group: group, eventQueue: clientQueue) { event in
            events.record("\(event)")
        }
    }

    /// Moves virtual time forward by `duration` (``ManualClock/advance(by:draining:)``): what is under
    /// way settles first, then the timers now due run, and everything they set off, on the loop and on
    /// the two event queues, has happened when it returns. Nothing here waits for real time to pass.
    func advance(by duration: Duration) async {
        await clock.advance(by: duration, draining: [clientQueue, serverQueue])
    }

    /// Waits until the loop and both event queues have nothing left to do at the current virtual time.
    func settle() async { await clock.settle(draining: [clientQueue, serverQueue]) }

    /// Waits until every event already issued has reached the recorders (and whatever they set off
    /// has happened): ``settle()``, without blocking a thread of the cooperative pool.
    func drainEventQueues() async { await settle() }

    deinit { group.shutdown() }
}
