import CAsyncSocketShims
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls a ``TCPSocket`` makes on a connected or listening descriptor, in the C library's
/// own conventions: a negative return means failure, with the reason in `errno`. A replacement (a
/// scripted fake, ``ScriptedSocketIO``) sets `errno` and returns -1 exactly as the kernel would, so
/// the library's own handling of the result (retrying `EINTR`, `EAGAIN` as "would block", naming the
/// call in ``SocketError/posix(operation:errno:)``) runs unchanged on top of it.
///
/// The real calls are not made through this protocol: ``SocketIO`` calls ``Posix`` directly when no
/// replacement is installed, so the production path has no existential call.
package protocol SystemCalls: AnyObject {
    /// `read(2)`: up to `buffer.count` bytes into `buffer`; 0 at end of stream.
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// `sendmsg(2)` (or `send(2)` for one buffer) of the gathered `iovecs`, never raising `SIGPIPE`.
    func writev(_ fd: Int32, _ iovecs: UnsafeBufferPointer<iovec>) -> Int
    /// `shutdown(2)` of the direction `how` (`SHUT_WR`, …).
    func shutdown(_ fd: Int32, _ how: Int32) -> Int32
    /// `close(2)`.
    func close(_ fd: Int32) -> Int32
    /// `accept4(2)` of a nonblocking, close-on-exec connection; the peer's address into `address`.
    func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32
    /// `getsockopt(2)` of an `Int32` option into `value`.
    func getOption(_ fd: Int32, level: Int32, name: Int32, _ value: UnsafeMutablePointer<Int32>) -> Int32
}

/// The seam an ``EventLoop`` puts between its sockets and the kernel: the real calls (``Posix``), or
/// a ``SystemCalls`` replacement for an embedded loop's tests.
///
/// A struct with an optional replacement rather than an existential: the real path costs one `nil`
/// check and then a direct, inlinable call to ``Posix``, with no allocation and no witness-table call
/// per read or write.
struct SocketIO {
    /// The replacement, or `nil` for the real system calls.
    let replacement: (any SystemCalls)?

    /// The kernel's calls.
    static var posix: SocketIO { SocketIO(replacement: nil) }

    /// `read(2)` into `buffer`, as ``Posix/read(_:into:)``.
    @inline(__always)
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> Posix.IOResult {
        guard let replacement else { return try Posix.read(fd, into: buffer) }
        return try Posix.checkIO("read") { replacement.read(fd, into: buffer) }
    }

    /// `sendmsg(2)` (`send(2)` for one buffer) of `iovecs`, as ``Posix/writev(_:_:)``.
    @inline(__always)
    func writev(_ fd: Int32, _ iovecs: UnsafeMutableBufferPointer<iovec>) throws(SocketError) -> Posix.IOResult {
        guard let replacement else { return try Posix.writev(fd, iovecs) }
        return try Posix.checkIO(iovecs.count == 1 ? "send" : "sendmsg") { replacement.writev(fd, UnsafeBufferPointer(iovecs)) }
    }

    /// `shutdown(2)`; errors are ignored (the peer may be gone already).
    func shutdown(_ fd: Int32, _ how: Int32) {
        guard let replacement else {
            #if canImport(Glibc)
                _ = Glibc.shutdown(fd, how)
            #else
                _ = Darwin.shutdown(fd, how)
            #endif
            return
        }
        _ = replacement.shutdown(fd, how)
    }

    /// `close(2)`, as ``Posix/close(_:)``: errors are ignored.
    func close(_ fd: Int32) {
        guard let replacement else { return Posix.close(fd) }
        _ = replacement.close(fd)
    }

    /// `accept4(2)` with the library's flags (nonblocking, close-on-exec); -1 and `errno` on failure.
    func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        guard let replacement else { return cass_accept4(fd, address, length, cass_accept_flags()) }
        return replacement.accept(fd, address, length)
    }

    /// `getsockopt(2)` of an `Int32` option, as ``Posix/getOption(_:level:name:)``.
    func getOption(_ fd: Int32, level: Int32, name: Int32) throws(SocketError) -> Int32 {
        guard let replacement else { return try Posix.getOption(fd, level: level, name: name) }
        var value: Int32 = 0
        _ = try Posix.check("getsockopt") { replacement.getOption(fd, level: level, name: name, &value) }
        return value
    }
}
