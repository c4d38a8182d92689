import Foundation
import Glibc
import SocketFraming
import TestSupport

/// Why a raw peer stopped: a socket call failed, a deadline passed, or the other end broke an expectation.
struct RawPeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The raw peers' TCP socket: plain blocking POSIX calls on 127.0.0.1, none of the library under test.
/// Every wait is bounded by a deadline (`poll(2)`), so a peer that stops talking fails the case instead
/// of hanging; writes never raise SIGPIPE (the other end may have closed already). Used from one thread
/// at a time (`runOnAThread`), never from Swift's cooperative pool.
final class BlockingLoopbackSocket: @unchecked Sendable {
    private(set) var descriptor: Int32
    /// Bytes read and not yet consumed (by ``readHead(before:)`` or a frame decoder).
    var buffer = FrameBuffer()

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: UInt16) throws -> BlockingLoopbackSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawPeerError("socket: errno \(errno)") }
        let result = withLoopbackAddress(port: port) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw RawPeerError("connect to port \(port): errno \(error)")
        }
        return BlockingLoopbackSocket(descriptor: fd)
    }

    /// A listening socket on 127.0.0.1 with a port the kernel picks, and that port.
    static func listen() throws -> (BlockingLoopbackSocket, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawPeerError("socket: errno \(errno)") }
        let listening = BlockingLoopbackSocket(descriptor: fd)
        guard withLoopbackAddress(port: 0, { bind(fd, $0, $1) }) == 0, Glibc.listen(fd, 16) == 0 else {
            throw RawPeerError("bind/listen: errno \(errno)")
        }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (listening, UInt16(bigEndian: address.sin_port))
    }

    /// The next connection, waiting until `deadline`.
    func accept(before deadline: ContinuousClock.Instant) throws -> BlockingLoopbackSocket {
        try wait(for: Int16(POLLIN), before: deadline, "a connection")
        let accepted = Glibc.accept(descriptor, nil, nil)
        guard accepted >= 0 else { throw RawPeerError("accept: errno \(errno)") }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)  // Glibc's module has no accept4
        return BlockingLoopbackSocket(descriptor: accepted)
    }

    /// Writes `bytes` in pieces ending at `cuts` (offsets into `bytes`) and at the end, one `send` each.
    /// Returns false when the other end has closed (EPIPE, ECONNRESET): the rest is not sent.
    func write(_ bytes: Data, cuts: [Int] = [], before deadline: ContinuousClock.Instant) throws -> Bool {
        var start = 0
        for end in (cuts.filter { $0 > 0 && $0 < bytes.count } + [bytes.count]) where end > start {
            var offset = start
            while offset < end {
                try wait(for: Int16(POLLOUT), before: deadline, "room to write")
                let sent = bytes.withUnsafeBytes { raw in
                    send(descriptor, raw.baseAddress.map { $0 + offset }, end - offset, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    if errno == EPIPE || errno == ECONNRESET { return false }
                    throw RawPeerError("send: errno \(errno)")
                }
                offset += sent
            }
            start = end
        }
        return true
    }

    /// The next bytes that arrive (at most 256 KiB), empty at the end of the stream (a FIN, or a reset
    /// after the other end closed), waiting until `deadline`.
    func read(before deadline: ContinuousClock.Instant) throws -> Data {
        try wait(for: Int16(POLLIN), before: deadline, "bytes from the other end")
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count >= 0 { return Data(chunk[0..<count]) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return Data() }
            throw RawPeerError("recv: errno \(errno)")
        }
    }

    /// Reads once more into ``buffer``; false at the end of the stream.
    func fill(before deadline: ContinuousClock.Instant) throws -> Bool {
        let more = try read(before: deadline)
        buffer.append(more)
        return !more.isEmpty
    }

    /// The HTTP head at the front of the stream, up to and including its blank line, as text; the bytes
    /// after it stay in ``buffer``.
    func readHead(before deadline: ContinuousClock.Instant) throws -> String {
        let end: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        while true {
            if let index = buffer.firstIndex(of: end, from: 0), let head = buffer.readData(count: index + end.count) {
                return String(decoding: head, as: UTF8.self)
            }
            guard buffer.readableBytes < 16 * 1024 else { throw RawPeerError("HTTP head over 16 KiB") }
            guard try fill(before: deadline) else { throw RawPeerError("closed during the handshake") }
        }
    }

    /// Whether the other end's next act is a FIN (not bytes, not a reset), waiting until `deadline`.
    func readsEndOfStream(before deadline: ContinuousClock.Instant) -> Bool {
        guard (try? wait(for: Int16(POLLIN), before: deadline, "the end of the stream")) != nil else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }

    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    private func wait(for events: Int16, before deadline: ContinuousClock.Instant, _ what: String) throws {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw RawPeerError("no \(what) in time") }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw RawPeerError("poll: errno \(errno)") }
        }
    }
}
