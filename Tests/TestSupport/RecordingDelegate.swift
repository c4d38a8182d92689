import AsyncSocket
import Foundation

/// What a ``RecordingDelegate`` saw, one case per delegate method.
/// Equatable so that tests compare errors by case (`event == .disconnected(.closedByPeer)`); accepted
/// sockets compare by identity.
public enum SocketEvent: Sendable, Equatable, CustomStringConvertible {
    case accepted(TCPSocket)
    case connected(host: String, port: UInt16)
    case connectedToUrl(URL)
    case readPartial(UInt, tag: Int)
    case wrotePartial(UInt, tag: Int)
    case readStreamClosed
    case secured
    /// The handshake paused for a trust decision; answer it with ``RecordingDelegate/answerTrust(_:)``.
    case receivedTrust(TLSPeerTrust)
    case rejectedRead(tag: Int, SocketError)
    case rejectedWrite(tag: Int, SocketError)
    case willDisconnect(unread: Data, unsentTags: [Int])
    case read(Data, tag: Int)
    case wrote(tag: Int)
    case disconnected(SocketError?)
    case highWatermark(Int)
    case lowWatermark(Int)

    public var description: String {
        switch self {
        case .accepted(let socket): return "accepted(\(socket.connectedAddress?.description ?? "?"))"
        case .connected(let host, let port): return "connected(\(host):\(port))"
        case .connectedToUrl(let url): return "connectedToUrl(\(url.path))"
        case .readPartial(let length, let tag): return "readPartial(\(length), tag: \(tag))"
        case .wrotePartial(let length, let tag): return "wrotePartial(\(length), tag: \(tag))"
        case .readStreamClosed: return "readStreamClosed"
        case .secured: return "secured"
        case .receivedTrust(let trust):
            return "receivedTrust(\(trust.certificateChain.count) certificates, \(trust.verificationError.map { "\($0)" } ?? "verified"))"
        case .rejectedRead(let tag, let error): return "rejectedRead(tag: \(tag), \(error))"
        case .rejectedWrite(let tag, let error): return "rejectedWrite(tag: \(tag), \(error))"
        case .willDisconnect(let unread, let tags):
            return "willDisconnect(unread: \(String(decoding: unread, as: UTF8.self).debugDescription), unsentTags: \(tags))"
        case .read(let data, let tag): return "read(\(String(decoding: data, as: UTF8.self).debugDescription), tag: \(tag))"
        case .wrote(let tag): return "wrote(tag: \(tag))"
        case .disconnected(let error): return "disconnected(\(error.map { "\($0)" } ?? "nil"))"
        case .highWatermark(let bytes): return "highWatermark(\(bytes))"
        case .lowWatermark(let bytes): return "lowWatermark(\(bytes))"
        }
    }

    public static func == (lhs: SocketEvent, rhs: SocketEvent) -> Bool {
        switch (lhs, rhs) {
        case (.accepted(let a), .accepted(let b)): return a === b
        case (.connected(let h1, let p1), .connected(let h2, let p2)): return h1 == h2 && p1 == p2
        case (.connectedToUrl(let a), .connectedToUrl(let b)): return a == b
        case (.readPartial(let l1, let t1), .readPartial(let l2, let t2)): return l1 == l2 && t1 == t2
        case (.wrotePartial(let l1, let t1), .wrotePartial(let l2, let t2)): return l1 == l2 && t1 == t2
        case (.readStreamClosed, .readStreamClosed), (.secured, .secured): return true
        case (.receivedTrust(let a), .receivedTrust(let b)): return a == b
        case (.rejectedRead(let t1, let e1), .rejectedRead(let t2, let e2)): return t1 == t2 && e1 == e2
        case (.rejectedWrite(let t1, let e1), .rejectedWrite(let t2, let e2)): return t1 == t2 && e1 == e2
        case (.willDisconnect(let d1, let t1), .willDisconnect(let d2, let t2)): return d1 == d2 && t1 == t2
        case (.read(let d1, let t1), .read(let d2, let t2)): return d1 == d2 && t1 == t2
        case (.wrote(let a), .wrote(let b)): return a == b
        case (.disconnected(let a), .disconnected(let b)): return a == b
        case (.highWatermark(let a), .highWatermark(let b)): return a == b
        case (.lowWatermark(let a), .lowWatermark(let b)): return a == b
        default: return false
        }
    }

    /// True for the partial-progress callbacks, which arrive in numbers that depend on timing.
    public var isProgress: Bool {
        switch self {
        case .readPartial, .wrotePartial: return true
        default: return false
        }
    }

    /// The error of a `.disconnected` event (`.some(nil)` for a disconnect without one), else `nil`:
    /// for comparing the error by case rather than by its description.
    public var disconnectError: SocketError?? {
        if case .disconnected(let error) = self { return .some(error) }
        return nil
    }

    /// The data of a `.read`, else nil.
    public var readData: Data? {
        if case .read(let data, _) = self { return data }
        return nil
    }
}

/// A ``TCPSocketDelegate`` that records every callback, keeps accepted sockets alive, and can react to
/// an accept (for example to queue the first read) through `onAccept`.
public final class RecordingDelegate: TCPSocketDelegate, Sendable {
    public let events = EventRecorder<SocketEvent>()
    /// One entry per timeout question ("read tag T"), to wait for.
    public let timeoutQuestionEvents = EventRecorder<String>()
    private let acceptedSockets = LockedValue<[TCPSocket]>([])
    private let timeoutAnswers = LockedValue<(extensions: [TimeInterval], asked: [String])>(([], []))
    private let onAccept: (@Sendable (TCPSocket) -> Void)?
    private let onRead: (@Sendable (TCPSocket, Data, Int) -> Void)?

    private let acceptLimit: Int
    private let acceptFilter: LockedValue<(@Sendable (TCPSocket) -> Bool)?> = LockedValue(nil)
    private let recordsProgress: Bool

    /// - Parameters:
    ///   - acceptLimit: connections beyond this many are closed unrecorded, so a stray connection
    ///     (another test's connect to a port it believed closed) cannot disturb the events.
    ///   - recordsProgress: whether to record the partial-progress callbacks, whose number depends on
    ///     how the bytes happen to arrive.
    public init(
        acceptLimit: Int = .max,
        recordsProgress: Bool = false,
        onAccept: (@Sendable (TCPSocket) -> Void)? = nil,
        onRead: (@Sendable (TCPSocket, Data, Int) -> Void)? = nil
    ) {
        self.acceptLimit = acceptLimit
        self.recordsProgress = recordsProgress
        self.onAccept = onAccept
        self.onRead = onRead
    }

    /// Sockets accepted so far, in order.
    public var accepted: [TCPSocket] { acceptedSockets.withLock { $0 } }

    /// Admits only accepted connections for which `filter` returns true; the others are closed unrecorded.
    public func admitOnly(_ filter: @escaping @Sendable (TCPSocket) -> Bool) {
        acceptFilter.withLock { $0 = filter }
    }

    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        let filter = acceptFilter.withLock { $0 }
        let admitted =
            (filter?(newSocket) ?? true)
            && acceptedSockets.withLock { sockets -> Bool in
                guard sockets.count < acceptLimit else { return false }
                sockets.append(newSocket)
                return true
            }
        guard admitted else {
            newSocket.setDelegate(nil, delegateQueue: nil)
            newSocket.disconnect()
            return
        }
        onAccept?(newSocket)
        events.record(.accepted(newSocket))
    }

    public func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        events.record(.connected(host: host, port: port))
    }

    public func socket(_ sock: TCPSocket, didConnectToUrl url: URL) {
        events.record(.connectedToUrl(url))
    }

    public func socket(_ sock: TCPSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {
        if recordsProgress { events.record(.readPartial(partialLength, tag: tag)) }
    }

    public func socket(_ sock: TCPSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {
        if recordsProgress { events.record(.wrotePartial(partialLength, tag: tag)) }
    }

    public func socketDidCloseReadStream(_ sock: TCPSocket) {
        events.record(.readStreamClosed)
    }

    public func socketDidSecure(_ sock: TCPSocket) {
        events.record(.secured)
    }

    private let trustAnswers = LockedValue<[@Sendable (Bool) -> Void]>([])

    /// Records the question and keeps its completion handler for ``answerTrust(_:)``.
    public func socket(_ sock: TCPSocket, didReceiveTrust trust: TLSPeerTrust, completionHandler: @escaping @Sendable (Bool) -> Void) {
        trustAnswers.withLock { $0.append(completionHandler) }
        events.record(.receivedTrust(trust))
    }

    /// Answers the oldest trust question not yet answered (from the calling thread); false when none waits.
    @discardableResult
    public func answerTrust(_ trusted: Bool) -> Bool {
        let answer = trustAnswers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        answer?(trusted)
        return answer != nil
    }

    public func socket(_ sock: TCPSocket, didRejectReadWithTag tag: Int, error: SocketError) {
        events.record(.rejectedRead(tag: tag, error))
    }

    public func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError) {
        events.record(.rejectedWrite(tag: tag, error))
    }

    public func socketWillDisconnect(_ sock: TCPSocket, unreadData: Data, unsentWriteTags: [Int]) {
        events.record(.willDisconnect(unread: unreadData, unsentTags: unsentWriteTags))
    }

    public func socket(_ sock: TCPSocket, shouldTimeoutReadWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval
    {
        timeoutAnswers.withLock { answers in
            answers.asked.append("read tag \(tag) elapsed \(elapsed) bytesDone \(length)")
            timeoutQuestionEvents.record("read tag \(tag)")
            return answers.extensions.isEmpty ? 0 : answers.extensions.removeFirst()
        }
    }

    public func socket(_ sock: TCPSocket, shouldTimeoutWriteWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval
    {
        timeoutAnswers.withLock { answers in
            answers.asked.append("write tag \(tag) elapsed \(elapsed) bytesDone \(length)")
            timeoutQuestionEvents.record("write tag \(tag)")
            return answers.extensions.isEmpty ? 0 : answers.extensions.removeFirst()
        }
    }

    /// Extensions (seconds) the delegate grants, in order, when asked whether a read or write should
    /// time out; once used up it answers 0. Set before the timeouts fire.
    public func grantTimeoutExtensions(_ seconds: [TimeInterval]) {
        timeoutAnswers.withLock { $0.extensions = seconds }
    }

    /// The timeout questions asked so far, as "read tag T elapsed E bytesDone B".
    public var timeoutQuestions: [String] { timeoutAnswers.withLock { $0.asked } }

    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        events.record(.read(data, tag: tag))
        onRead?(sock, data, tag)
    }

    public func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) {
        events.record(.wrote(tag: tag))
    }

    public func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        events.record(.disconnected(err))
    }

    public func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {
        events.record(.highWatermark(queuedBytes))
    }

    public func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        events.record(.lowWatermark(queuedBytes))
    }
}
