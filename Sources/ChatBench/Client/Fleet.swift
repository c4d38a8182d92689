import SocketBench
import AsyncSocket
import Dispatch
import Foundation

/// The client side of a run: one event-loop thread that every connection of the run shares (so the
/// run's state needs no locks, and the load generator takes at most one core of the two), connecting
/// and logging in, waiting for the end, and closing down. The calling thread only waits.
final class Fleet: Sendable {
    /// How long connecting and logging in every connection may take. Each first login claims its name
    /// with an Argon2id hash (about 0.1 s and 64 MiB on the server, two at a time).
    static let loginTimeout: Duration = .seconds(120)

    let group: EventLoopGroup
    /// The loop every connection and the run's state live on.
    var loop: EventLoop { group.loops[0] }
    private let logins = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let failureLog = LockedValue<[String]>([])

    init() {
        group = EventLoopGroup(numberOfThreads: 1, name: "chat-bench")
    }

    /// Connection failures so far, in order.
    var failures: [String] { failureLog.withLock { $0 } }

    /// A connection logged in. Any thread.
    func didLogIn() { logins.signal() }

    /// A connection failed for `reason` (before or after its login): the first three are told on
    /// standard error. Any thread.
    func didFail(_ reason: String) {
        let count = failureLog.withLock { log -> Int in
            log.append(reason)
            return log.count
        }
        if count <= 3 { Output.complain(reason) }
        logins.signal()
        finished.signal()
    }

    /// The run is complete. Any thread.
    func didFinish() { finished.signal() }

    /// Connects every one of `connections` to `server` and waits until each has logged in or
    /// something failed. Returns false (after telling why) when not all logged in.
    func connectAndLogIn(_ connections: [ChatConnection], server: ServerAddress) -> Bool {
        for connection in connections {
            do {
                try connection.connect(to: server)
            } catch {
                didFail("\(connection.name): cannot connect to \(server): \(error)")
                return false
            }
        }
        let deadline = DispatchTime.now() + .nanoseconds(Int(Fleet.loginTimeout.components.seconds) * 1_000_000_000)
        for _ in connections {
            guard logins.wait(timeout: deadline) == .success else {
                Output.complain("not every connection logged in within \(Fleet.loginTimeout)")
                return false
            }
            if !failures.isEmpty { return false }
        }
        return true
    }

    /// Waits until ``didFinish()`` or a failure, or until `progress` (read on the loop every second)
    /// has not changed for `stallTimeout`. Returns whether the run finished.
    func waitForEnd(stallTimeout: Duration, progress: @escaping @Sendable () -> Int) -> Bool {
        var last = -1
        var lastChange = ContinuousClock.now
        while true {
            if finished.wait(timeout: .now() + .seconds(1)) == .success { return failures.isEmpty }
            let now = loop.runAndWait(progress)
            if now != last {
                last = now
                lastChange = .now
            } else if ContinuousClock.now - lastChange >= stallTimeout {
                Output.complain("no progress for \(stallTimeout): giving up")
                return false
            }
        }
    }

    /// Closes `connections` on the loop and stops the loop thread.
    func shutDown(_ connections: [ChatConnection]) {
        loop.runAndWait { for connection in connections { connection.close() } }
        group.shutdown()
        // Connections hold their handler weakly and the loop runs no more callbacks now.
        withExtendedLifetime(connections) {}
    }
}
