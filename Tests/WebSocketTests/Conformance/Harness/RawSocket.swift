import Foundation
import Glibc
import TestSupport

/// The fuzzing peer's TCP socket: plain blocking POSIX calls on 127.0.0.1, none of the library under test.
/// Every wait is bounded by a deadline; writes never raise SIGPIPE (the testee may have closed already).
/// Used from one thread at a time (the case's), never from Swift's cooperative pool.
final class RawSocket: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var fd: Int32

    private init(fd: Int32) {
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: UInt16) throws -> RawSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        let result = withLoopbackAddress(port: port) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw Failure(description: "connect to port \(port): errno \(error)")
        }
        return RawSocket(fd: fd)
    }

    /// A listening socket on 127.0.0.1 with a port the kernel picks, and that port.
    static func listen() throws -> (RawSocket, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        let listening = RawSocket(fd: fd)
        guard withLoopbackAddress(port: 0, { bind(fd, $0, $1) }) == 0, Glibc.listen(fd, 16) == 0 else {
            throw Failure(description: "bind/listen: errno \(errno)")
        }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (listening, UInt16(bigEndian: address.sin_port))
    }

    /// The next connection, waiting until `deadline`.
    func accept(before deadline: ContinuousClock.Instant) throws -> RawSocket {
        try wait(for: Int16(POLLIN), before: deadline, "a connection")
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else { throw Failure(description: "accept: errno \(errno)") }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        return RawSocket(fd: accepted)
    }

    /// Writes `bytes` in pieces ending at `cuts` (offsets into `bytes`) and at the end, one `send` each.
    /// Returns false when the testee has closed (EPIPE, ECONNRESET): the rest is not sent.
    func write(_ bytes: Data, cuts: [Int] = [], before deadline: ContinuousClock.Instant) throws -> Bool {
        var start = 0
        for end in (cuts.filter { $0 > 0 && $0 < bytes.count } + [bytes.count]) where end > start {
            var offset = start
            while offset < end {
                try wait(for: Int16(POLLOUT), before: deadline, "room to write")
                let sent = bytes.withUnsafeBytes { raw in
                    send(fd, raw.baseAddress.map { $0 + offset }, end - offset, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    if errno == EPIPE || errno == ECONNRESET { return false }
                    throw Failure(description: "send: errno \(errno)")
                }
                offset += sent
            }
            start = end
        }
        return true
    }

    /// The next bytes that arrive (at most 256 KiB), empty at the end of the stream (a FIN, or a reset
    /// after the testee closed), waiting until `deadline`.
    func read(before deadline: ContinuousClock.Instant) throws -> Data {
        try wait(for: Int16(POLLIN), before: deadline, "bytes from the testee")
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return Data() }
            throw Failure(description: "recv: errno \(errno)")
        }
    }

    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    private func wait(for events: Int16, before deadline: ContinuousClock.Instant, _ what: String) throws {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw Failure(description: "no \(what) in time") }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw Failure(description: "poll: errno \(errno)") }
        }
    }
}
