import Foundation
import Glibc
import SocketFraming
import TestSupport

/// Why a raw conformance peer stopped: a socket call failed, timed out, or the peer broke an expectation.
struct RawPeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A blocking TCP socket on 127.0.0.1 for the raw conformance peers, used by one thread of its own
/// (`runOnAThread`): every read and write is bounded by `SO_RCVTIMEO`/`SO_SNDTIMEO` (10 s, a hang's
/// bound, scaled under ThreadSanitizer), so a peer that stops talking fails the case instead of hanging.
final class BlockingLoopbackSocket {
    let descriptor: Int32
    /// Bytes read and not yet consumed.
    var buffer = FrameBuffer()

    private init(descriptor: Int32) throws {
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: Int(TestTiming.hangTimeout(10)), tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(descriptor, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { Glibc.close(descriptor) }

    /// A listening socket on 127.0.0.1, port chosen by the kernel: its descriptor and port.
    static func listen() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawPeerError("socket: errno \(errno)") }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && Glibc.listen(fd, 8) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RawPeerError("bind/listen: errno \(errno)")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The next connection on `listening`, waiting at most a hang's bound.
    static func accept(_ listening: Int32) throws -> BlockingLoopbackSocket {
        var poller = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(TestTiming.hangTimeout(10) * 1000)) == 1 else { throw RawPeerError("no connection arrived") }
        let fd = Glibc.accept(listening, nil, nil)
        guard fd >= 0 else { throw RawPeerError("accept: errno \(errno)") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // Glibc's module has no accept4; children close it anyway
        return try BlockingLoopbackSocket(descriptor: fd)
    }

    /// A connection to 127.0.0.1:`port`.
    static func connect(to port: UInt16) throws -> BlockingLoopbackSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawPeerError("socket: errno \(errno)") }
        let socket = try BlockingLoopbackSocket(descriptor: fd)
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw RawPeerError("connect: errno \(errno)") }
        return socket
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Writes all of `data`.
    func write(_ data: Data) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = send(descriptor, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard written > 0 else { throw RawPeerError("send: errno \(errno)") }
                offset += written
            }
        }
    }

    /// Reads once more into ``buffer``; throws at the end of the stream or on a timeout.
    func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw RawPeerError(count == 0 ? "the peer closed the connection" : "recv: errno \(errno)") }
        chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// The HTTP head at the front of the stream, up to and including its blank line, as text.
    func readHead() throws -> String {
        let end: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        while true {
            if let index = buffer.firstIndex(of: end, from: 0), let head = buffer.readData(count: index + end.count) {
                return String(decoding: head, as: UTF8.self)
            }
            guard buffer.readableBytes < 16 * 1024 else { throw RawPeerError("HTTP head over 16 KiB") }
            try fill()
        }
    }

    /// Whether the peer closes the TCP connection next (a read returns the end of the stream).
    func readsEndOfStream() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }
}
