#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Readiness a test controls: whether a fake descriptor would be reported readable or writable by a
/// level-triggered selector right now (``ScriptedSocketIO`` answers from its scripts).
package protocol ScriptedReadiness: AnyObject {
    /// Data, end of stream, an error or a scripted would-block is waiting on `fd`.
    func isReadable(_ fd: Int32) -> Bool
    /// `fd` has send space, or a write error is waiting.
    func isWritable(_ fd: Int32) -> Bool
}

/// The selector of an embedded ``EventLoop``: no kernel, no blocking. ``wait(timeoutNanoseconds:_:)``
/// returns at once with an event for every registered descriptor that ``ScriptedReadiness`` says is
/// ready for what it is watched for, level-triggered, in ascending descriptor order.
final class EmbeddedSelector: SelectorBackend {
    private let readiness: any ScriptedReadiness
    private var watched: [Int32: (token: UInt64, interest: SelectorInterest)] = [:]

    init(readiness: any ScriptedReadiness) {
        self.readiness = readiness
    }

    func register(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
        guard watched[fd] == nil else { throw SocketError.posix(operation: "epoll_ctl", errno: EEXIST) }
        watched[fd] = (token, interest)
    }

    func reregister(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
        guard watched[fd] != nil else { throw SocketError.posix(operation: "epoll_ctl", errno: ENOENT) }
        watched[fd] = (token, interest)
    }

    func deregister(_ fd: Int32) {
        watched[fd] = nil
    }

    /// Never blocks, whatever `timeoutNanoseconds` says: time moves only by ``EventLoop/advance(by:)``.
    func wait(timeoutNanoseconds: UInt64?, _ body: (SelectorEvent) -> Void) throws(SocketError) {
        for fd in watched.keys.sorted() {
            // An earlier event's handler may have closed or re-registered this descriptor.
            guard let (token, interest) = watched[fd] else { continue }
            let readable = interest.contains(.read) && readiness.isReadable(fd)
            let writable = interest.contains(.write) && readiness.isWritable(fd)
            if readable || writable { body(SelectorEvent(token: token, readable: readable, writable: writable)) }
        }
    }

    /// Nothing to wake: the loop runs only when the test calls it.
    func wakeup() {}
}
