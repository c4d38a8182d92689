@testable import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

// MARK: Helpers for the async API tests

private enum Outcome<Value: Sendable>: Sendable {
    case value(Value)
    case timedOut
}

/// Runs `body` and returns its result, or throws ``WaitTimedOut`` (cancelling it) when it takes longer
/// than `limit`: every wait in these tests is bounded, none is a fixed sleep.
func within<Value: Sendable>(
    _ limit: Duration = .seconds(10),
    _ what: String = "the operation",
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Outcome<Value>.self) { group in
        group.addTask { .value(try await body()) }
        group.addTask {
            try await Task.sleep(for: TestTiming.hangLimit(limit))
            return .timedOut
        }
        defer { group.cancelAll() }
        guard case .value(let value)? = try await group.next() else {
            throw WaitTimedOut(description: "\(what) did not finish within \(limit)")
        }
        return value
    }
}

/// The error `body` throws, or nil when it returns; bounded as ``within(_:_:_:)``.
func thrownError(
    _ limit: Duration = .seconds(10),
    _ body: @escaping @Sendable () async throws -> Void
) async throws -> (any Error)? {
    let box = try await within(limit) { () -> ErrorBox? in
        do {
            try await body()
            return nil
        } catch {
            return ErrorBox(error)
        }
    }
    return box?.error
}

/// The next connection `listener` hands out (a fresh iterator: iterators share the listener's queue),
/// waiting at most `limit`.
func nextConnection(_ listener: TCPListener, within limit: Duration = .seconds(10)) async throws -> TCPConnection? {
    try await within(limit, "the accept") {
        var iterator = listener.makeAsyncIterator()
        return try await iterator.next()
    }
}

/// Carries an error out of a task (errors are not `Sendable` as a type-erased existential in every position).
struct ErrorBox: @unchecked Sendable {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}

func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }
func bytes(_ string: String) -> Data { Data(string.utf8) }

/// A listener on 127.0.0.1 with a kernel-chosen port, a client connected to it, and the server's side
/// of that connection.
struct ConnectedPair {
    let listener: TCPListener
    let client: TCPConnection
    let server: TCPConnection

    static func open(allowRemoteHalfClosure: Bool = false, group: EventLoopGroup = .shared) async throws -> ConnectedPair {
        let options = TCPConnection.Options(allowRemoteHalfClosure: allowRemoteHalfClosure)
        let listener = try await TCPListener.bind(
            host: "127.0.0.1", port: 0, options: .init(connectionOptions: options), group: group)
        let client = try await TCPConnection.connect(
            toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5),
            options: options, group: group)
        let server = try await nextConnection(listener)
        guard let server else { throw WaitTimedOut(description: "the listener ended without a connection") }
        return ConnectedPair(listener: listener, client: client, server: server)
    }

    func close() async {
        await client.close()
        await server.close()
        await listener.close()
    }
}

/// A listener on 127.0.0.1 that runs `handler` for each accepted connection in a task of its own, and
/// closes the connection when the handler ends.
final class AsyncTestServer: Sendable {
    let listener: TCPListener
    private let task: Task<Void, Never>

    var port: UInt16 { listener.port }

    init(_ handler: @escaping @Sendable (TCPConnection) async throws -> Void) async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        self.listener = listener
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                do {
                    for try await connection in listener {
                        group.addTask {
                            try? await handler(connection)
                            await connection.close()
                        }
                    }
                } catch {}
                group.cancelAll()
            }
        }
    }

    /// Closes the listener and cancels the handlers still running, and waits for them to end.
    func stop() async {
        await listener.close()
        task.cancel()
        await task.value
    }

    /// Echoes every line (ending in LF) back, prefixed with "echo: ".
    static let lineEcho: @Sendable (TCPConnection) async throws -> Void = { connection in
        while true {
            let line = try await connection.read(upTo: TCPSocket.lfData, maxLength: 4096)
            try await connection.write(bytes("echo: ") + line)
        }
    }
}

// MARK: Tests

@Suite struct AsyncConnectionTests {
    @Test func echoOverConnectAndAccept() async throws {
        let server = try await AsyncTestServer(AsyncTestServer.lineEcho)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: server.port, timeout: .seconds(5))
        #expect(client.remoteAddress == SocketAddress(ipAddress: "127.0.0.1", port: server.port))
        #expect(client.localAddress?.host == "127.0.0.1")
        try await client.write(bytes("hello\n"))
        let reply = try await within { try await client.read(upTo: TCPSocket.lfData) }
        #expect(text(reply) == "echo: hello\n")
        await client.close()
        await server.stop()
    }

    @Test func acceptedConnectionKnowsBothAddresses() async throws {
        let pair = try await ConnectedPair.open()
        #expect(pair.server.localAddress == SocketAddress(ipAddress: "127.0.0.1", port: pair.listener.port))
        #expect(pair.server.remoteAddress == pair.client.localAddress)
        #expect(pair.client.remoteAddress == pair.server.localAddress)
        #expect(pair.listener.localAddress == SocketAddress(ipAddress: "127.0.0.1", port: pair.listener.port))
        await pair.close()
        // The addresses stay readable after the close.
        #expect(pair.client.remoteAddress?.port == pair.listener.port)
    }

    @Test func readOfAvailableBytesTakesAtMostMaxLengthAndLeavesTheRest() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("abcdefgh"))
        let first = try await within { try await pair.server.read(maxLength: 3) }
        let second = try await within { try await pair.server.read() }
        #expect(text(first) == "abc")
        #expect(text(second) == "defgh")
        await pair.close()
    }

    @Test func readExactlyGathersSeveralWritesAndLeavesTheOverflow() async throws {
        let pair = try await ConnectedPair.open()
        for piece in ["ab", "cd", "ef"] { try await pair.client.write(bytes(piece)) }
        let five = try await within { try await pair.server.read(exactly: 5) }
        let none = try await within { try await pair.server.read(exactly: 0) }
        let one = try await within { try await pair.server.read(exactly: 1) }
        #expect(text(five) == "abcde")
        #expect(none.isEmpty)
        #expect(text(one) == "f")
        await pair.close()
    }

    @Test func delimiterSplitAcrossWritesIsFound() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let reading = Task { try await server.read(upTo: TCPSocket.crlfData) }
        // The CR arrives and is taken from the socket before the LF is even sent.
        try await pair.client.write(bytes("hello\r"))
        try await waitUntil { server.bridge.unreadBytes == 6 }
        try await pair.client.write(bytes("\nworld"))
        #expect(text(try await within { try await reading.value }) == "hello\r\n")
        #expect(text(try await within { try await server.read(exactly: 5) }) == "world")
        // Cut every way at once: several writes, each delimiter split.
        let lines = Task { [try await server.read(upTo: TCPSocket.crlfData), try await server.read(upTo: TCPSocket.crlfData)] }
        for piece in ["a", "b\r", "\nc", "d\r", "\n"] { try await pair.client.write(bytes(piece)) }
        #expect(try await within { try await lines.value }.map(text) == ["ab\r\n", "cd\r\n"])
        await pair.close()
    }

    @Test func twoMessagesInOneWriteAreReadAsTwo() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("first\nsecond\nthird"))
        let first = try await within { try await pair.server.read(upTo: TCPSocket.lfData) }
        let second = try await within { try await pair.server.read(upTo: TCPSocket.lfData) }
        let rest = try await within { try await pair.server.read(exactly: 5) }
        #expect([first, second, rest].map(text) == ["first\n", "second\n", "third"])
        await pair.close()
    }

    @Test func concurrentReadsAreSatisfiedInCallOrder() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        // Three reads queued before any byte arrives, from three tasks, each started once the previous
        // one's read is queued (read numbers 1, 2, 3 prove the order).
        let first = Task { try await server.read(exactly: 2) }
        try await waitUntil { server.bridge.readsQueued == 1 }
        let second = Task { try await server.read(upTo: TCPSocket.lfData) }
        try await waitUntil { server.bridge.readsQueued == 2 }
        let third = Task { try await server.read(maxLength: 100) }
        try await waitUntil { server.bridge.readsQueued == 3 }
        try await pair.client.write(bytes("12line\nrest"))
        let results = try await within { [try await first.value, try await second.value, try await third.value] }
        #expect(results.map(text) == ["12", "line\n", "rest"])
        await pair.close()
    }

    @Test func readTimeoutClosesTheConnectionAndCarriesTheReadsNumber() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("x"))
        #expect(text(try await within { try await pair.server.read() }) == "x")
        let timedOut = try await thrownError { _ = try await pair.server.read(exactly: 10, timeout: .milliseconds(100)) }
        #expect(timedOut as? SocketError == .readTimeout(tag: 2))
        // The connection is closed: this side's calls throw the same error, the peer sees the close.
        let write = try await thrownError { try await pair.server.write(bytes("late")) }
        #expect(write as? SocketError == .readTimeout(tag: 2))
        let peer = try await thrownError { _ = try await pair.client.read() }
        #expect(peer as? SocketError == .closedByPeer)
        await pair.close()
    }

    @Test func readWithinItsTimeoutSucceeds() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("prompt"))
        let data = try await within { try await pair.server.read(exactly: 6) }
        #expect(text(data) == "prompt")
        // The timer of a completed read is gone: the connection stays usable.
        try await pair.server.write(bytes("ok"))
        #expect(text(try await within { try await pair.client.read(exactly: 2) }) == "ok")
        await pair.close()
    }

    @Test func delimiterMissingWithinMaxLengthThrowsReadMaxedOutAndKeepsTheBytes() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("abcdefgh"))
        let error = try await thrownError { _ = try await pair.server.read(upTo: TCPSocket.lfData, maxLength: 5) }
        #expect(error as? SocketError == .readMaxedOut(maxLength: 5))
        // The connection closed, but what had arrived stays readable, then the error repeats.
        #expect(text(try await within { try await pair.server.read() }) == "abcdefgh")
        let after = try await thrownError { _ = try await pair.server.read() }
        #expect(after as? SocketError == .readMaxedOut(maxLength: 5))
        await pair.close()
    }

    @Test func messageOfExactlyMaxLengthIsAccepted() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("1234\r\n"))
        let line = try await within { try await pair.server.read(upTo: TCPSocket.crlfData, maxLength: 6) }
        #expect(text(line) == "1234\r\n")
        await pair.close()
    }

    @Test func peerCloseThrowsClosedByPeerOnlyAfterEveryByteIsRead() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("last words"))
        await pair.client.close()
        #expect(text(try await within { try await pair.server.read(exactly: 4) }) == "last")
        #expect(text(try await within { try await pair.server.read() }) == " words")
        let read = try await thrownError { _ = try await pair.server.read() }
        #expect(read as? SocketError == .closedByPeer)
        let write = try await thrownError { try await pair.server.write(bytes("anyone?")) }
        #expect(write as? SocketError == .closedByPeer)
        try await within { try await pair.server.waitUntilReadStreamClosed() }
        await pair.close()
    }

    @Test func readThePeersDataCannotCompleteThrowsClosedByPeerAndLeavesTheBytes() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("0123456789"))
        await pair.client.close()
        let error = try await thrownError { _ = try await pair.server.read(exactly: 20) }
        #expect(error as? SocketError == .closedByPeer)
        #expect(text(try await within { try await pair.server.read(maxLength: 100) }) == "0123456789")
        let after = try await thrownError { _ = try await pair.server.read(maxLength: 100) }
        #expect(after as? SocketError == .closedByPeer)
        await pair.close()
    }

    @Test func closeFailsPendingAndLaterCallsWithConnectionClosed() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let pending = Task { try await server.read(exactly: 1) }
        try await waitUntil { server.bridge.readsQueued == 1 }
        await server.close()
        let error = try await thrownError { _ = try await pending.value }
        #expect(error as? SocketError == .connectionClosed)
        let read = try await thrownError { _ = try await server.read() }
        #expect(read as? SocketError == .connectionClosed)
        let write = try await thrownError { try await server.write(bytes("x")) }
        #expect(write as? SocketError == .connectionClosed)
        await server.close()  // again: returns at once
        let peer = try await thrownError { _ = try await pair.client.read() }
        #expect(peer as? SocketError == .closedByPeer)
        await pair.close()
    }

    @Test func invalidReadsAreRejectedWithBadParam() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        await #expect(throws: SocketError.badParam("a read needs a maxLength of at least 1")) { try await server.read(maxLength: 0) }
        await #expect(throws: SocketError.badParam("a read of -1 bytes")) { try await server.read(exactly: -1) }
        await #expect(throws: SocketError.badParam("a read to a delimiter needs a delimiter of at least one byte")) {
            try await server.read(upTo: Data())
        }
        await #expect(throws: SocketError.badParam("maxLength 1 is shorter than the delimiter")) {
            try await server.read(upTo: TCPSocket.crlfData, maxLength: 1)
        }
        // Rejected reads consume nothing and leave the connection usable.
        try await pair.client.write(bytes("fine"))
        #expect(text(try await within { try await server.read() }) == "fine")
        await pair.close()
    }

    @Test func connectToAClosedPortThrowsConnectionRefused() async throws {
        let port = unusedLoopbackPort()
        let error = try await thrownError { _ = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5)) }
        #expect(error as? SocketError == .connectionRefused(operation: "connect", errno: ECONNREFUSED))
    }

    @Test func connectToASocketAddressAndOverIPv6() async throws {
        let listener = try await TCPListener.bind(host: "::1", port: 0)
        let address = try #require(SocketAddress(ipAddress: "::1", port: listener.port))
        let client = try await TCPConnection.connect(to: address, timeout: .seconds(5))
        #expect(client.remoteAddress == address)
        let server = try #require(try await nextConnection(listener))
        try await client.write(bytes("v6"))
        #expect(text(try await within { try await server.read(exactly: 2) }) == "v6")
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func writeTimeoutClosesTheConnectionAndCarriesTheWritesNumber() async throws {
        let pair = try await ConnectedPair.open()
        try await pair.client.write(bytes("a"))
        // The server reads nothing: 32 MiB cannot all reach the kernel's buffers.
        let big = Data(count: 32 << 20)
        let error = try await thrownError { try await pair.client.write(big, timeout: .milliseconds(200)) }
        #expect(error as? SocketError == .writeTimeout(tag: 2))
        await pair.close()
    }
}

/// Polls `condition` until it holds, for at most `limit`: for internal state that has no event to
/// wait for (which read the connection has queued).
func waitUntil(_ limit: Duration = .seconds(10), _ condition: @escaping @Sendable () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: limit)
    while !condition() {
        guard clock.now < deadline else { throw WaitTimedOut(description: "condition not met within \(limit)") }
        await Task.yield()
    }
}

/// A loopback listening descriptor nobody accepts from, with its accept queue filled: further connects
/// to it stall in SYN-SENT (Linux drops the SYNs), so a connect stays in progress until its timeout.
struct StalledListener {
    let fd: Int32
    let port: UInt16
    let fillers: [TCPConnection]

    static func open() async throws -> StalledListener {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let port = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> UInt16 in
                guard bind(fd, raw, length) == 0, listen(fd, 0) == 0, getsockname(fd, raw, &length) == 0 else { return 0 }
                return UInt16(bigEndian: pointer.pointee.sin_port)
            }
        }
        #expect(port != 0)
        var fillers: [TCPConnection] = []
        for _ in 0..<16 {
            do {
                fillers.append(try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .milliseconds(300)))
            } catch SocketError.connectTimeout {
                return StalledListener(fd: fd, port: port, fillers: fillers)
            }
        }
        throw WaitTimedOut(description: "the accept queue never filled")
    }

    func close() async {
        for filler in fillers { await filler.close() }
        Glibc.close(fd)
    }
}

@Suite struct AsyncConnectTests {
    @Test func connectThatCannotCompleteThrowsConnectTimeout() async throws {
        let stalled = try await StalledListener.open()
        let error = try await thrownError {
            _ = try await TCPConnection.connect(toHost: "127.0.0.1", port: stalled.port, timeout: .milliseconds(200))
        }
        #expect(error as? SocketError == .connectTimeout)
        await stalled.close()
    }

    @Test func cancelledConnectThrowsCancellationError() async throws {
        let stalled = try await StalledListener.open()
        let connecting = Task { try await TCPConnection.connect(toHost: "127.0.0.1", port: stalled.port, timeout: .seconds(60)) }
        connecting.cancel()
        let error = try await thrownError { _ = try await connecting.value }
        #expect(error is CancellationError)
        // Also once the connect is surely under way.
        let port = stalled.port
        let started = LockedValue(false)
        let underWay = Task {
            started.withLock { $0 = true }
            return try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(60))
        }
        try await waitUntil { started.withLock { $0 } }
        await Task.yield()
        underWay.cancel()
        let later = try await thrownError(.seconds(10)) { _ = try await underWay.value }
        #expect(later is CancellationError)
        await stalled.close()
    }
}
