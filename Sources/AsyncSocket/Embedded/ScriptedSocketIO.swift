#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Scripted system calls for an embedded ``EventLoop`` (tokio's mock I/O, SwiftNIO's `EmbeddedChannel`
/// in spirit): fake descriptors whose reads return exactly the results a test queued (bytes, would
/// block, end of stream, any `errno` such as `ECONNRESET` or `EINTR`), whose writes take as many bytes
/// as the test gave them send space for (fewer than offered is a short write; none is would block)
/// or fail with a scripted `errno` (`EPIPE`), recording every byte written. Readiness is level-triggered
/// and follows from the scripts: a descriptor with a read result waiting is readable, one with send
/// space (or a write error) waiting is writable, so ``EventLoop/run()`` drives the handlers.
///
/// Failures follow the C library's convention (`errno` set, -1 returned), so the library's own
/// `EINTR` retry and `EAGAIN` handling run on top of it. Single-threaded: use it on the embedded
/// loop's thread only.
package final class ScriptedSocketIO: SystemCalls, ScriptedReadiness {
    /// One scripted result of `read(2)`.
    package enum Read: Equatable, Sendable {
        /// Data: one read returns up to this many bytes (what does not fit the buffer stays next).
        case bytes([UInt8])
        /// `EAGAIN`: the selector said readable, but nothing was there.
        case wouldBlock
        /// End of stream (the peer's FIN): this read and every later one return 0.
        case endOfStream
        /// The call fails with `errno` (`ECONNRESET`; `EINTR`, which the library retries).
        case failure(Int32)

        /// `bytes` of a string's UTF-8.
        package static func text(_ string: String) -> Read { .bytes(Array(string.utf8)) }
    }

    private struct Descriptor {
        var reads: [Read] = []
        var atEndOfStream = false
        /// Bytes writes may take before they would block; `Int.max` is unlimited.
        var sendSpace = Int.max
        var writeFailures: [Int32] = []
        var written: [UInt8] = []
        var shutdowns: [Int32] = []
        var isClosed = false
    }

    private var descriptors: [Int32: Descriptor] = [:]
    private var nextDescriptor: Int32
    /// Every call made, in order, with its outcome: `"read(100) = 5"`, `"read(100) = EINTR"`,
    /// `"writev(100, 2 buffers, 7 bytes) = 3"`, `"shutdown(100, SHUT_WR)"`, `"close(100)"`.
    package private(set) var log: [String] = []

    /// Fake descriptors are numbered from `firstDescriptor` up; they are never real ones, and never
    /// handed to the kernel.
    package init(firstDescriptor: Int32 = 1000) {
        nextDescriptor = firstDescriptor
    }

    /// A new fake descriptor, connected, with nothing to read and unlimited send space.
    package func makeDescriptor() -> Int32 {
        let fd = nextDescriptor
        nextDescriptor += 1
        descriptors[fd] = Descriptor()
        return fd
    }

    // MARK: Scripting

    /// Queues results for the next reads of `fd`, after those queued before.
    package func script(_ fd: Int32, reads: Read...) {
        descriptors[fd, default: Descriptor()].reads.append(contentsOf: reads)
    }

    /// Sets the bytes writes to `fd` may take before they would block (`Int.max`: unlimited).
    package func setSendSpace(_ fd: Int32, _ bytes: Int) {
        descriptors[fd, default: Descriptor()].sendSpace = bytes
    }

    /// The peer read `bytes`: that much more send space (the descriptor turns writable).
    package func addSendSpace(_ fd: Int32, _ bytes: Int) {
        let space = descriptors[fd, default: Descriptor()].sendSpace
        descriptors[fd, default: Descriptor()].sendSpace = space > Int.max - bytes ? Int.max : space + bytes
    }

    /// Makes the next writes of `fd` fail, one `errno` each (`EPIPE`; `EINTR`, retried), before any
    /// send space is used.
    package func failWrites(_ fd: Int32, with codes: Int32...) {
        descriptors[fd, default: Descriptor()].writeFailures.append(contentsOf: codes)
    }

    // MARK: Inspecting

    /// Every byte written to `fd` so far.
    package func written(_ fd: Int32) -> [UInt8] { descriptors[fd]?.written ?? [] }

    /// The bytes written to `fd` so far, as UTF-8 text.
    package func writtenText(_ fd: Int32) -> String { String(decoding: written(fd), as: UTF8.self) }

    /// Read results queued for `fd` and not yet returned.
    package func pendingReads(_ fd: Int32) -> [Read] { descriptors[fd]?.reads ?? [] }

    /// The `how` of every `shutdown(2)` of `fd` (`SHUT_WR`, …), in order.
    package func shutdowns(_ fd: Int32) -> [Int32] { descriptors[fd]?.shutdowns ?? [] }

    /// Whether `fd` was closed.
    package func isClosed(_ fd: Int32) -> Bool { descriptors[fd]?.isClosed ?? false }

    // MARK: ScriptedReadiness

    /// A read result is queued, or the stream has ended (level-triggered, as epoll reports it).
    package func isReadable(_ fd: Int32) -> Bool {
        guard let descriptor = descriptors[fd], !descriptor.isClosed else { return false }
        return !descriptor.reads.isEmpty || descriptor.atEndOfStream
    }

    /// Send space is left, or a write failure is queued.
    package func isWritable(_ fd: Int32) -> Bool {
        guard let descriptor = descriptors[fd], !descriptor.isClosed else { return false }
        return descriptor.sendSpace > 0 || !descriptor.writeFailures.isEmpty
    }

    // MARK: SystemCalls

    private func fail(_ code: Int32) -> Int {
        errno = code
        return -1
    }

    private static func name(_ code: Int32) -> String {
        switch code {
        case EINTR: "EINTR"
        case EAGAIN: "EAGAIN"
        case ECONNRESET: "ECONNRESET"
        case EPIPE: "EPIPE"
        case EBADF: "EBADF"
        default: "errno \(code)"
        }
    }

    /// Returns the next scripted read result; with none queued, `EAGAIN` (or 0 after end of stream).
    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard var descriptor = descriptors[fd], !descriptor.isClosed else {
            log.append("read(\(fd)) = EBADF")
            return fail(EBADF)
        }
        defer { descriptors[fd] = descriptor }
        guard !descriptor.reads.isEmpty else {
            let outcome = descriptor.atEndOfStream ? 0 : -1
            log.append("read(\(fd)) = \(outcome == 0 ? "0" : "EAGAIN")")
            return outcome == 0 ? 0 : fail(EAGAIN)
        }
        switch descriptor.reads.removeFirst() {
        case .bytes(let bytes):
            let count = min(bytes.count, buffer.count)
            buffer.copyBytes(from: bytes[..<count])
            if count < bytes.count { descriptor.reads.insert(.bytes(Array(bytes[count...])), at: 0) }
            log.append("read(\(fd)) = \(count)")
            return count
        case .wouldBlock:
            log.append("read(\(fd)) = EAGAIN")
            return fail(EAGAIN)
        case .endOfStream:
            descriptor.atEndOfStream = true
            log.append("read(\(fd)) = 0")
            return 0
        case .failure(let code):
            log.append("read(\(fd)) = \(Self.name(code))")
            return fail(code)
        }
    }

    /// Fails with the next scripted `errno`, if any; else takes as many bytes as the send space allows
    /// (`EAGAIN` when there is none) and records them.
    package func writev(_ fd: Int32, _ iovecs: UnsafeBufferPointer<iovec>) -> Int {
        let total = iovecs.reduce(0) { $0 + $1.iov_len }
        let call = "writev(\(fd), \(iovecs.count) buffer\(iovecs.count == 1 ? "" : "s"), \(total) bytes)"
        guard var descriptor = descriptors[fd], !descriptor.isClosed else {
            log.append("\(call) = EBADF")
            return fail(EBADF)
        }
        defer { descriptors[fd] = descriptor }
        if !descriptor.writeFailures.isEmpty {
            let code = descriptor.writeFailures.removeFirst()
            log.append("\(call) = \(Self.name(code))")
            return fail(code)
        }
        guard descriptor.sendSpace > 0 else {
            log.append("\(call) = EAGAIN")
            return fail(EAGAIN)
        }
        let accepted = min(total, descriptor.sendSpace)
        var left = accepted
        for vector in iovecs where left > 0 {
            let count = min(left, vector.iov_len)
            if count > 0, let base = vector.iov_base {
                descriptor.written.append(contentsOf: UnsafeRawBufferPointer(start: base, count: count))
            }
            left -= count
        }
        if descriptor.sendSpace != Int.max { descriptor.sendSpace -= accepted }
        log.append("\(call) = \(accepted)")
        return accepted
    }

    /// Records the shutdown; `EBADF` once closed.
    package func shutdown(_ fd: Int32, _ how: Int32) -> Int32 {
        guard descriptors[fd]?.isClosed == false else {
            log.append("shutdown(\(fd)) = EBADF")
            return Int32(fail(EBADF))
        }
        descriptors[fd]?.shutdowns.append(how)
        log.append("shutdown(\(fd), \(how == Int32(SHUT_WR) ? "SHUT_WR" : how == Int32(SHUT_RD) ? "SHUT_RD" : "SHUT_RDWR"))")
        return 0
    }

    /// Marks the descriptor closed (no longer readable or writable); `EBADF` the second time.
    package func close(_ fd: Int32) -> Int32 {
        guard descriptors[fd]?.isClosed == false else {
            log.append("close(\(fd)) = EBADF")
            return Int32(fail(EBADF))
        }
        descriptors[fd]?.isClosed = true
        log.append("close(\(fd))")
        return 0
    }

    /// No scripted connections: always would block.
    package func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        log.append("accept(\(fd)) = EAGAIN")
        return Int32(fail(EAGAIN))
    }

    /// `SO_ERROR` is 0 (no pending error); other options fail with `ENOPROTOOPT`.
    package func getOption(_ fd: Int32, level: Int32, name: Int32, _ value: UnsafeMutablePointer<Int32>) -> Int32 {
        guard level == SOL_SOCKET && name == SO_ERROR else { return Int32(fail(ENOPROTOOPT)) }
        value.pointee = 0
        return 0
    }
}
