/// What a registered descriptor wants to hear about.
struct SelectorInterest: OptionSet, Equatable {
    let rawValue: UInt8
    /// Readable, or end of file, or an error.
    static let read = SelectorInterest(rawValue: 1)
    /// Writable, or a connect finished, or an error.
    static let write = SelectorInterest(rawValue: 2)
}

/// One readiness event from the selector.
struct SelectorEvent {
    /// The token given at registration (descriptor and generation).
    var token: UInt64
    /// Data, end of file, an error or a hang-up is waiting: a read will not block.
    var readable: Bool
    /// Buffer space, a finished connect, an error or a hang-up: a write will not block.
    var writable: Bool
}

/// Something the event loop calls when its descriptor is ready. Called on the loop thread only.
protocol Selectable: AnyObject {
    /// The descriptor is readable (data, end of file, error).
    func selectorReadable()
    /// The descriptor is writable (space, connect done, error).
    func selectorWritable()
}

/// What an ``EventLoop`` waits on: the kernel's readiness notification (``Selector``, epoll or
/// kqueue) or an ``EmbeddedSelector`` that reports the readiness a test scripted. Loop thread only,
/// except ``wakeup()``.
protocol SelectorBackend: AnyObject {
    /// Starts watching `fd` for `interest`; its events carry `token`.
    func register(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError)
    /// Changes what `fd`, already watched, is watched for.
    func reregister(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError)
    /// Stops watching `fd`.
    func deregister(_ fd: Int32)
    /// Waits up to `timeoutNanoseconds` (`nil` = forever, 0 = poll) and calls `body` for each event.
    func wait(timeoutNanoseconds: UInt64?, _ body: (SelectorEvent) -> Void) throws(SocketError)
    /// Wakes a thread blocked in ``wait(timeoutNanoseconds:_:)``. Safe from any thread.
    func wakeup()
}

extension Selector: SelectorBackend {}

/// The selector an ``EventLoop`` owns, as a concrete enum so the threaded loop's calls into epoll stay
/// direct calls (no witness table, nothing to allocate).
enum LoopSelector {
    /// The kernel's: the loop runs on its own thread.
    case system(Selector)
    /// A test's: the loop runs on the test's thread (``EventLoop/embedded(_:)``).
    case embedded(EmbeddedSelector)

    /// See ``SelectorBackend/register(_:token:interest:)``.
    @inline(__always)
    func register(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
        switch self {
        case .system(let selector): try selector.register(fd, token: token, interest: interest)
        case .embedded(let selector): try selector.register(fd, token: token, interest: interest)
        }
    }

    /// See ``SelectorBackend/reregister(_:token:interest:)``.
    @inline(__always)
    func reregister(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
        switch self {
        case .system(let selector): try selector.reregister(fd, token: token, interest: interest)
        case .embedded(let selector): try selector.reregister(fd, token: token, interest: interest)
        }
    }

    /// See ``SelectorBackend/deregister(_:)``.
    @inline(__always)
    func deregister(_ fd: Int32) {
        switch self {
        case .system(let selector): selector.deregister(fd)
        case .embedded(let selector): selector.deregister(fd)
        }
    }

    /// See ``SelectorBackend/wait(timeoutNanoseconds:_:)``.
    @inline(__always)
    func wait(timeoutNanoseconds: UInt64?, _ body: (SelectorEvent) -> Void) throws(SocketError) {
        switch self {
        case .system(let selector): try selector.wait(timeoutNanoseconds: timeoutNanoseconds, body)
        case .embedded(let selector): try selector.wait(timeoutNanoseconds: timeoutNanoseconds, body)
        }
    }

    /// See ``SelectorBackend/wakeup()``.
    @inline(__always)
    func wakeup() {
        switch self {
        case .system(let selector): selector.wakeup()
        case .embedded(let selector): selector.wakeup()
        }
    }
}
