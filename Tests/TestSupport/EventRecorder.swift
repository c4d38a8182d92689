import AsyncSocket
import Dispatch
import Foundation
import Glibc

/// The test waited longer than its limit for an event.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Collects events from callbacks on any thread and hands them to a test in arrival order, waiting
/// (with a limit) for ones that have not happened yet. No fixed sleeps: a wait ends as soon as the
/// event arrives.
public final class EventRecorder<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var consumed = 0
        var waiter: (id: Int, continuation: CheckedContinuation<Event?, Never>)?
        var nextWaiterID = 0
    }
    private let state = LockedValue(State())

    public init() { StallWatchdog.start }

    /// Records `event`; wakes a test waiting in ``next(within:)``.
    public func record(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                state.consumed += 1
                state.events.append(event)
                return waiter.continuation
            }
            state.events.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Every event recorded so far, consumed or not.
    public var all: [Event] { state.withLock { $0.events } }

    /// Events recorded and not yet returned by ``next(within:)``.
    public var pending: [Event] { state.withLock { Array($0.events[$0.consumed...]) } }

    /// The next event not yet returned, waiting up to `limit` for it to arrive.
    public func next(within limit: Duration = .seconds(10)) async throws -> Event {
        let limit = TestTiming.hangLimit(limit)
        let event: Event? = await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if state.consumed < state.events.count {
                    state.consumed += 1
                    continuation.resume(returning: state.events[state.consumed - 1])
                    return nil
                }
                state.nextWaiterID += 1
                state.waiter = (state.nextWaiterID, continuation)
                return state.nextWaiterID
            }
            guard let id else { return }
            let nanoseconds = Int(limit.components.seconds) * 1_000_000_000 + Int(limit.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                let expired = state.withLock { state -> CheckedContinuation<Event?, Never>? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
        }
        // The event came through the continuation, whose hand-over ThreadSanitizer cannot see: taking the
        // lock once orders everything the recording thread did before it recorded (creating an accepted
        // socket, say) before what this task does next, for ThreadSanitizer as for the hardware.
        state.withLock { _ in }
        guard let event else {
            throw WaitTimedOut(description: "no event within \(limit); recorded so far: \(all)")
        }
        return event
    }

    /// The next `count` events, each waited for as ``next(within:)`` does.
    public func next(_ count: Int, within limit: Duration = .seconds(10)) async throws -> [Event] {
        var events: [Event] = []
        for _ in 0..<count { events.append(try await next(within: limit)) }
        return events
    }

    /// The next `count` events that satisfy `predicate`, skipping the others.
    public func next(_ count: Int, within limit: Duration = .seconds(10), where predicate: (Event) -> Bool) async throws -> [Event] {
        var events: [Event] = []
        while events.count < count {
            let event = try await next(within: limit)
            if predicate(event) { events.append(event) }
        }
        return events
    }

    /// Skips events until one satisfies `predicate` and returns it.
    public func first(within limit: Duration = .seconds(10), where predicate: (Event) -> Bool) async throws -> Event {
        while true {
            let event = try await next(within: limit)
            if predicate(event) { return event }
        }
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on and nobody else can take while this object holds it:
/// a socket bound to it but not listening, so connects are refused (ECONNREFUSED). ``release()`` frees
/// the port for a server the test starts later.
public final class ReservedLoopbackPort: Sendable {
    public let port: UInt16
    private let fd: LockedValue<Int32>

    /// Reserves a port below the kernel's ephemeral range (see ``unusedLoopbackPort()``), so that once
    /// released it is not handed out to another socket's connect or bind-to-0 before the test's server
    /// binds it.
    /// Reserved ports come from 10,000–19,999 and ``unusedLoopbackPort()``'s from 20,000 up to the
    /// ephemeral range, and no port is handed out twice in one test process, so the port a reservation
    /// hands over at ``release()`` is never another test's.
    ///
    /// - Parameter sharedWithServer: set `SO_REUSEPORT`, so a server that sets it too (a
    ///   `LongLinkServer` with `isReusePortEnabled`) can bind the port while this still holds it: the
    ///   hand-over has no moment in which the port is free for anyone else. Connections still go only
    ///   to the server (this socket never listens).
    public init(sharedWithServer: Bool = false) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if sharedWithServer {
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var chosen: UInt16 = 0
        for _ in 0..<200 {
            let candidate = unusedLoopbackPort(in: 10_000..<20_000)
            if candidate != 0 && bindLoopback(fd, candidate) {
                chosen = candidate
                break
            }
        }
        port = chosen
        self.fd = LockedValue(fd)
    }

    /// Frees the port (closes the bound socket). Idempotent.
    ///
    /// The port may stay bound for a moment after this returns: a child process being started by
    /// another test at the same time (`posix_spawn`) holds a copy of every descriptor until its `exec`
    /// closes the close-on-exec ones. A test that binds the port in this process should rather reserve
    /// it with `sharedWithServer` and release it once its server is bound.
    public func release() {
        fd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}

/// A TCP port on 127.0.0.1 that was free a moment ago and that nothing listens on now, for a server a
/// test starts later on a port it must know first. It is taken from below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), so listeners other tests open on port 0 (which get
/// ephemeral ports) cannot take it meanwhile and receive connections meant for that server.
public func unusedLoopbackPort() -> UInt16 {
    let range =
        (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
        .split(whereSeparator: \.isWhitespace).compactMap { Int($0) } ?? []
    let ephemeralLow = range.first ?? 32768
    return unusedLoopbackPort(in: 20_000..<max(20_001, ephemeralLow))
}

/// Ports handed out by ``unusedLoopbackPort()`` and ``ReservedLoopbackPort`` in this test process: each
/// is handed out once. A released reservation's port stays unbound for a while when the test starts a
/// server process on it (socket-bench workers): a second reservation took it then in a soak, and the
/// first test's server failed with `EADDRINUSE`.
private let handedOutPorts = LockedValue<Set<UInt16>>([])

/// A port of `ports` free on 127.0.0.1 right now and never handed out before, or 0 when 200 random
/// tries found none.
private func unusedLoopbackPort(in ports: Range<Int>) -> UInt16 {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<200 {
        let port = UInt16(Int.random(in: ports, using: &generator))
        guard handedOutPorts.withLock({ $0.insert(port).inserted }) else { continue }
        if isFreeLoopbackPort(port) { return port }
    }
    return 0
}

/// Whether 127.0.0.1:`port` can be bound right now (the probe socket is closed again at once).
private func isFreeLoopbackPort(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bindLoopback(fd, port)
}

/// Binds `fd` to 127.0.0.1:`port`.
private func bindLoopback(_ fd: Int32, _ port: UInt16) -> Bool {
    withLoopbackAddress(port: port) { bind(fd, $0, $1) } == 0
}

/// Calls `body` with 127.0.0.1:`port` as a `sockaddr_in` (for `bind(2)`, `connect(2)`) and its length.
public func withLoopbackAddress<R>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// Waits until `condition` holds, checking every millisecond, for state that no callback announces;
/// throws after `limit`.
public func waitUntil(within limit: Duration = .seconds(10), _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + TestTiming.hangLimit(limit)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: "never: \(what)") }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Runs `body` on a thread of its own and returns its result: for work that blocks (a `read(2)` of a
/// terminal, a load run), which on a thread of Swift's cooperative pool (2 threads on this machine)
/// would stall every other test, or deadlock with a task it waits for.
public func runOnAThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// ``runOnAThread(_:)`` for work that throws: blocking client calls (NATS requests and their waits).
public func runOnAThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
}

/// `count` bytes, byte `i` being `i × multiplier + i >> shift` (mod 256): a pattern in which a byte
/// lost, doubled or moved shows. Filled through a raw buffer: a `map` over millions of indices costs
/// a debug build's cooperative thread a second or more, stalling the tests beside it.
public func patternBytes(_ count: Int, multiplier: Int = 1, shift: Int = 64) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var index = 0
        while index < count {
            base[index] = UInt8(truncatingIfNeeded: index &* multiplier &+ (shift < 64 ? index >> shift : 0))
            index += 1
        }
    }
    return data
}
