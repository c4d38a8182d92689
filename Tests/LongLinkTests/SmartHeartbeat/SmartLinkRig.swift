import AsyncSocket
import Foundation
import LongLink
import TestSupport

/// A fake ``NetworkChangeSource``: ``fire()`` reports a change as a route monitor would.
final class FakeRouteSource: NetworkChangeSource, @unchecked Sendable {
    private let handlers = LockedValue<[@Sendable () -> Void]>([])
    var starts: Int { handlers.withLock { $0.count } }

    func start(onChange: @escaping @Sendable () -> Void) throws { handlers.withLock { $0.append(onChange) } }

    func stop() { handlers.withLock { $0.removeAll() } }

    func fire() {
        for handler in handlers.withLock({ $0 }) { handler() }
    }
}

/// A ``LinkHarness`` echo server (idle timeout an hour unless said, longer than any interval) behind a
/// ``NATProxy`` forgetting after `nat`, and a client of the proxy with a smart heartbeat (Mars's
/// figures unless `configure` changes them) whose network identifier is ``network`` and whose
/// learned intervals go to ``store``; all in virtual time.
final class SmartLinkRig: Sendable {
    let harness = LinkHarness()
    let server: LongLinkServer<TextCodec>
    let proxy: NATProxy
    let store: InMemoryHeartbeatIntervalStore
    let routes = FakeRouteSource()
    let network = LockedValue<String?>("net-a")
    let client: LongLinkClient<TextCodec>

    init(
        nat: Duration, store: InMemoryHeartbeatIntervalStore = InMemoryHeartbeatIntervalStore(),
        serverIdleTimeout: Duration = .seconds(3600), configure: (inout SmartHeartbeat) -> Void = { _ in }
    ) throws {
        server = try harness.makeServer(idleTimeout: serverIdleTimeout)
        proxy = try NATProxy(serverPort: server.port, timeout: nat, group: harness.group)
        self.store = store
        var smart = SmartHeartbeat()
        smart.store = store
        let network = network
        smart.networkIdentifier = { network.withLock { $0 } }
        smart.networkChanges = routes
        configure(&smart)
        client = harness.makeClient(port: proxy.port) { $0.smartHeartbeat = smart }
    }

    var connectedLine: String { "connected to 127.0.0.1:\(proxy.port)" }

    /// Connects and consumes the connect event (and the interval events before it).
    func connect() async throws {
        client.connect()
        _ = try await harness.clientEvents.first { $0 == connectedLine }
    }

    /// Lets the link stay idle until its next heartbeat and waits for the outcome: answered when the
    /// interval is under the NAT's timeout; otherwise the acknowledgement timeout (30 s) passes, the
    /// link drops and reconnects. Returns the events of that heartbeat, the connect excluded.
    @discardableResult
    func beat() async throws -> [String] {
        let interval = client.currentHeartbeatInterval
        await harness.advance(by: interval)
        var events: [String] = []
        if interval < proxy.timeout {
            events.append(try await harness.clientEvents.first { $0.hasPrefix("heartbeat after") })
        } else {
            await harness.advance(by: .seconds(30))
            while true {
                let event = try await harness.clientEvents.next()
                if event == connectedLine { break }
                events.append(event)
            }
        }
        // The interval change, if any, is emitted in the same loop pass as the outcome.
        await harness.advance(by: .zero)
        await harness.drainEventQueues()
        while let event = harness.clientEvents.pending.first, event.hasPrefix("heartbeat interval") {
            events.append(try await harness.clientEvents.next())
        }
        return events
    }

    /// Heartbeats until `changes` interval changes have been reported (at most `limit` heartbeats);
    /// returns those changes.
    func beats(untilChanges changes: Int, limit: Int = 60) async throws -> [String] {
        var seen: [String] = []
        for _ in 0..<limit where seen.count < changes {
            seen += try await beat().filter { $0.hasPrefix("heartbeat interval") }
        }
        return seen
    }

    deinit {
        client.disconnect()
        proxy.stop()
        server.stop()
    }
}
