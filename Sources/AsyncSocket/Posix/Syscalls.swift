import CAsyncSocketShims
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers over the system calls the sockets use. Each retries on `EINTR` and turns a `-1`
/// return into ``SocketError/posix(operation:errno:)``, naming the call.
enum Posix {
    /// Outcome of a nonblocking I/O call: bytes moved, or "would block" (`EAGAIN`/`EWOULDBLOCK`).
    enum IOResult: Equatable {
        case processed(Int)
        case wouldBlock
    }

    @inline(__always)
    static func check(_ operation: String, _ body: () -> Int32) throws(SocketError) -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = cass_errno()
            if code == EINTR { continue }
            throw SocketError.system(operation: operation, errno: code)
        }
    }

    @inline(__always)
    static func checkIO(_ operation: String, _ body: () -> Int) throws(SocketError) -> IOResult {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let code = cass_errno()
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SocketError.system(operation: operation, errno: code)
        }
    }

    /// `read(2)` into `buffer`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> IOResult {
        try checkIO("read") {
            #if canImport(Glibc)
                Glibc.read(fd, buffer.baseAddress, buffer.count)
            #else
                Darwin.read(fd, buffer.baseAddress, buffer.count)
            #endif
        }
    }

    /// `sendmsg(2)` of the gathered `iovecs` with `MSG_NOSIGNAL`, so a closed peer gives `EPIPE`, never
    /// `SIGPIPE` (Apple platforms set `SO_NOSIGPIPE` on the socket instead).
    static func writev(_ fd: Int32, _ iovecs: UnsafeMutableBufferPointer<iovec>) throws(SocketError) -> IOResult {
        if iovecs.count == 1 {
            // One buffer: send(2), which skips copying in a message header and an iovec array.
            let only = iovecs[0]
            return try checkIO("send") { send(fd, only.iov_base, only.iov_len, cass_msg_nosignal()) }
        }
        var message = msghdr()
        message.msg_iov = iovecs.baseAddress
        #if canImport(Glibc)
            message.msg_iovlen = iovecs.count
        #else
            message.msg_iovlen = Int32(iovecs.count)
        #endif
        return try checkIO("sendmsg") { sendmsg(fd, &message, cass_msg_nosignal()) }
    }

    /// `SOCK_STREAM`, as `getsockopt(SO_TYPE)` reports it.
    static var streamSocketType: Int32 { cass_sock_stream() }

    /// `close(2)`. Errors are ignored: the descriptor is released either way (see close(2), NOTES).
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }

    /// `setsockopt(2)` of an `Int32` option.
    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SocketError) {
        var value = value
        _ = try check("setsockopt") {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// `getsockopt(2)` of an `Int32` option.
    static func getOption(_ fd: Int32, level: Int32, name: Int32) throws(SocketError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try check("getsockopt") { getsockopt(fd, level, name, &value, &length) }
        return value
    }

    /// `fcntl(2)` `O_NONBLOCK` and `FD_CLOEXEC` on a descriptor this library did not create.
    static func setNonBlocking(_ fd: Int32) throws(SocketError) {
        let flags = try check("fcntl") { fcntl(fd, F_GETFL) }
        _ = try check("fcntl") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        _ = try check("fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }
}
