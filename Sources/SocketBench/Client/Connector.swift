import AsyncSocket
import Foundation

/// Connects a run's connections, at most ``maxPending`` at a time (as loadgen does, so a burst of
/// thousands of SYNs does not overflow the server's accept queue), and signals once each has connected
/// or failed. Thread-safe: connections report from their loop threads.
final class Connector: Sendable {
    /// Connects in progress at once: 256.
    static let maxPending = 256
    /// Seconds a connect may take: 30.
    static let timeout: TimeInterval = 30

    private struct Progress {
        var total = 0, next = 0, pending = 0, resolved = 0, connected = 0, failed = 0
        var errorsTold = 0
    }

    private let progress = LockedValue(Progress())
    private let allResolved = DispatchSemaphore(value: 0)
    private let connections = LockedValue<[BenchConnection]>([])
    private let address: SocketAddress?
    private let host: String
    private let port: UInt16
    private let spreadSources: Bool

    /// - Parameter spreadSources: bind connection `i` to 127.0.0.(2 + i mod 249) before connecting
    ///   (only for an IPv4 loopback `host`).
    init(host: String, port: UInt16, spreadSources: Bool) {
        self.host = host
        self.port = port
        address = SocketAddress(ipAddress: host, port: port)
        self.spreadSources = spreadSources && address?.isIPv4 == true && host.hasPrefix("127.")
    }

    /// Connects every one of `list` and returns once each has connected or failed: how many did each.
    func connectAll(_ list: [BenchConnection]) -> (connected: Int, failed: Int) {
        connections.withLock { $0 = list }
        progress.withLock { $0.total = list.count }
        launchMore()
        allResolved.wait()
        return progress.withLock { ($0.connected, $0.failed) }
    }

    /// A connection connected, or failed to (`error`). Any thread.
    func connectionDidResolve(connected: Bool, error: SocketError? = nil) {
        if resolve(connected: connected, error: error) { launchMore() }
    }

    /// Counts a connection's outcome, tells the first 3 failures on standard error, and returns whether
    /// more connects may start (false once all are resolved; then it signals).
    private func resolve(connected: Bool, error: SocketError?) -> Bool {
        let (done, tell) = progress.withLock { progress -> (Bool, Bool) in
            progress.pending -= 1
            progress.resolved += 1
            if connected { progress.connected += 1 } else { progress.failed += 1; progress.errorsTold += 1 }
            return (progress.resolved == progress.total, !connected && progress.errorsTold <= 3)
        }
        if tell { Output.complain("connect to \(host):\(port) failed: \(error.map { "\($0)" } ?? "unknown error")") }
        if done { allResolved.signal() }
        return !done
    }

    /// Starts connects until ``maxPending`` are in progress or none is left.
    private func launchMore() {
        let all = connections.withLock { $0 }
        while true {
            let index = progress.withLock { progress -> Int? in
                guard progress.next < all.count, progress.pending < Connector.maxPending else { return nil }
                progress.next += 1
                progress.pending += 1
                return progress.next - 1
            }
            guard let index else { return }
            let source = spreadSources ? "127.0.0.\(2 + index % 249)" : nil
            do {
                try all[index].connect(to: address, host: host, port: port, from: source, timeout: Connector.timeout)
            } catch {
                guard resolve(connected: false, error: error) else { return }
            }
        }
    }
}
