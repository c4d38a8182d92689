import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fixed set of ``EventLoop``s, one thread each; ``next()`` hands them out in turn so sockets spread
/// over the loops. By default one loop per core, as SwiftNIO's `MultiThreadedEventLoopGroup`.
public final class EventLoopGroup: Sendable {
    /// The loops, in the order ``next()`` returns them.
    public let loops: [EventLoop]
    private let cursor = Atomic(0)

    /// The group sockets use when none is given: one loop per online core (`sysconf(_SC_NPROCESSORS_ONLN)`).
    public static let shared = EventLoopGroup(name: "AsyncSocket.shared")

    /// Starts `numberOfThreads` loops (at least 1; default one per online core).
    ///
    /// - Parameters:
    ///   - numberOfThreads: how many loops, each on a thread of its own; below 1 counts as 1.
    ///   - clock: a ``ManualClock`` makes every timer of these loops (timeouts, heartbeats,
    ///     reconnect delays) wait for virtual time instead of the monotonic clock; for tests.
    ///   - name: the threads' name prefix (loop `i` is `"NAME.loop-i"`, as shown by `top -H` and debuggers).
    public init(numberOfThreads: Int = EventLoopGroup.coreCount, clock: ManualClock? = nil, name: String = "AsyncSocket") {
        loops = (0..<max(1, numberOfThreads)).map { index in
            do {
                return try EventLoop(name: "\(name).loop-\(index)", clock: clock)
            } catch {
                fatalError("AsyncSocket: cannot create an event loop: \(error)")
            }
        }
    }

    /// A group of loops made elsewhere, an embedded loop (``EventLoop/embedded(_:)``) say, so sockets on
    /// it hand connections they accept to it too. ``shutdown()`` runs embedded loops' remaining tasks.
    package init(wrapping loops: [EventLoop]) {
        precondition(!loops.isEmpty, "a group needs a loop")
        self.loops = loops
    }

    /// The number of online cores, `sysconf(_SC_NPROCESSORS_ONLN)`.
    public static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The next loop in round-robin order. Safe from any thread.
    public func next() -> EventLoop {
        let index = cursor.add(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Stops every loop and waits for their threads to end. Close the group's sockets first; call from
    /// outside the group's loops. The ``shared`` group is never shut down.
    public func shutdown() {
        for loop in loops { loop.stop() }
    }
}
