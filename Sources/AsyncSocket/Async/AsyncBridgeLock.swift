/// One suspended call of the async API: its continuation while it waits, and whether its task was
/// cancelled before it could wait. The fields are guarded by the lock of the bridge that owns the call
/// (hence unchecked); the object identifies the call to its cancellation handler.
final class AsyncWaiter<Value: Sendable>: @unchecked Sendable {
    var continuation: CheckedContinuation<Value, any Error>?
    var cancelled = false

    /// Hands back the continuation, once, for resuming.
    func take() -> CheckedContinuation<Value, any Error>? {
        defer { continuation = nil }
        return continuation
    }

    /// Marks the wait cancelled (a continuation not parked yet resumes at once when it sees this) and
    /// hands back the parked continuation, if any, for resuming with the cancellation.
    func cancel() -> CheckedContinuation<Value, any Error>? {
        cancelled = true
        return take()
    }
}

/// One suspended `next()` of a bridge's elements (``AsyncBridgeLock/next(whenTaken:)``): like
/// ``AsyncWaiter``, with the outcome as a `Result` so the caller can throw it typed.
final class ElementWaiter<Element: Sendable>: @unchecked Sendable {
    var continuation: CheckedContinuation<Result<Element?, SocketError>, Never>?
    var cancelled = false

    /// Hands back the continuation, once, for resuming.
    func take() -> CheckedContinuation<Result<Element?, SocketError>, Never>? {
        defer { continuation = nil }
        return continuation
    }

    /// Marks the wait cancelled and hands back the parked continuation, if any.
    func cancel() -> CheckedContinuation<Result<Element?, SocketError>, Never>? {
        cancelled = true
        return take()
    }
}

/// Work decided under a bridge's lock and done after it is released: resuming continuations and calling
/// into the socket, whose delegate callbacks (inline on the loop thread) take the lock again.
struct AsyncEffects {
    private var effects: [() -> Void] = []
    mutating func append(_ effect: @escaping () -> Void) { effects.append(effect) }
    func run() { for effect in effects { effect() } }
}

/// Elements waiting for the iteration, oldest first: an array with a moving head, whose taken slots are
/// emptied at once (so a taken element, a datagram's bytes say, is not kept alive).
struct ElementQueue<Element> {
    private var slots: [Element?] = []
    private var head = 0

    var count: Int { slots.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        slots.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let element = slots[head]
        slots[head] = nil
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }
}

/// The locked state the async bridges (``AsyncConnectionBridge``, ``AsyncListenerBridge``,
/// ``UDPEndpointBridge``) share, behind one ``LockedValue`` (a pthread mutex, which ThreadSanitizer
/// understands): the elements their delegate callbacks hand to `next()` calls (accepted connections,
/// datagrams), the close requested and the socket's end, and the bridge's own fields (`Extra`, reached
/// through the state as if they were its own). A bridge that hands out no elements (the connection's:
/// its reads are the socket's own) has `Never` as its `Element`.
///
/// Work decided under the lock (resuming a continuation, calling into the socket) is collected in
/// ``AsyncEffects`` and done after the lock is released (``locked(_:)``).
struct AsyncBridgeLock<Element: Sendable, Extra>: Sendable {
    /// Where the elements are: at most one of a buffer and waiting `next()` calls is non-empty, so
    /// each case carries its own.
    enum Elements {
        /// Open; the elements received and not taken yet (possibly none), oldest first.
        case idle(ElementQueue<Element>)
        /// Open, nothing buffered; the `next()` calls waiting, oldest first (never empty).
        case waiting([ElementWaiter<Element>])
        /// No more elements arrive: those still buffered are handed out first, then `failure` is
        /// thrown by one `next()` (when it ended with one); after that, `next()` returns nil.
        case finished(ElementQueue<Element>, failure: SocketError?)
    }

    /// What ``offer(_:bufferLimit:_:)`` did with an element.
    enum Offer: Equatable {
        /// Resumed the oldest waiting `next()` with it.
        case handed
        /// Buffered it; `count` elements are buffered now.
        case buffered(count: Int)
        /// Neither: the elements have finished, or the buffer is at its limit. The caller disposes of it.
        case refused
    }

    @dynamicMemberLookup
    struct State {
        var elements = Elements.idle(ElementQueue())
        /// `close()` was called.
        var closeRequested = false
        /// The socket has ended (reported its disconnect or close), with this error.
        var ended: SocketError?
        /// The `close()` calls waiting for the socket's end.
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// The bridge's own fields.
        var extra: Extra

        subscript<Field>(dynamicMember field: WritableKeyPath<Extra, Field>) -> Field {
            get { extra[keyPath: field] }
            set { extra[keyPath: field] = newValue }
        }

        /// Elements buffered and not taken yet.
        var bufferedCount: Int {
            switch elements {
            case .idle(let queue), .finished(let queue, _): queue.count
            case .waiting: 0
            }
        }

        /// `next()` calls waiting for an element.
        var waitingCount: Int {
            if case .waiting(let waiters) = elements { waiters.count } else { 0 }
        }

        /// Whether the elements have finished.
        var isFinished: Bool {
            if case .finished = elements { true } else { false }
        }

        /// Hands `element` to the oldest waiting `next()`, or else buffers it unless `bufferLimit`
        /// elements are buffered already; refuses it once the elements have finished.
        mutating func offer(_ element: Element, bufferLimit: Int = .max, _ effects: inout AsyncEffects) -> Offer {
            switch elements {
            case .waiting(var waiters):
                elements = .idle(ElementQueue())  // the list is uniquely referenced while it changes
                while !waiters.isEmpty {
                    let waiter = waiters.removeFirst()
                    if let continuation = waiter.take() {
                        if !waiters.isEmpty { elements = .waiting(waiters) }
                        effects.append { continuation.resume(returning: .success(element)) }
                        return .handed
                    }
                }
                return offer(element, bufferLimit: bufferLimit, &effects)
            case .idle(var queue):
                guard queue.count < bufferLimit else { return .refused }
                elements = .idle(ElementQueue())  // the queue is uniquely referenced while it grows
                queue.append(element)
                elements = .idle(queue)
                return .buffered(count: queue.count)
            case .finished:
                return .refused
            }
        }

        /// The oldest buffered element, taken; nil when none is.
        mutating func takeBuffered() -> Element? {
            switch elements {
            case .idle(var queue):
                elements = .idle(ElementQueue())
                defer { elements = .idle(queue) }
                return queue.popFirst()
            case .finished(var queue, let failure):
                elements = .finished(ElementQueue(), failure: failure)
                defer { elements = .finished(queue, failure: failure) }
                return queue.popFirst()
            case .waiting:
                return nil
            }
        }

        /// Ends the elements: the waiting `next()` calls are resumed, the first with `failure` (every
        /// one of them when `failureToEveryWaiter`) and the others with nil; with none waiting, one later
        /// `next()` throws `failure`. The buffered elements are kept for `next()` when
        /// `keepingBuffered`, else handed back (for the caller to dispose of). Once finished, it only
        /// hands back the buffered elements (unless `keepingBuffered`); the failure stays as it is.
        @discardableResult
        mutating func finish(
            failure: SocketError?, failureToEveryWaiter: Bool = false, keepingBuffered: Bool,
            _ effects: inout AsyncEffects
        ) -> ElementQueue<Element> {
            switch elements {
            case .finished(let queue, let failure):
                guard !keepingBuffered else { return ElementQueue() }
                elements = .finished(ElementQueue(), failure: failure)
                return queue
            case .idle(let queue):
                elements = .finished(keepingBuffered ? queue : ElementQueue(), failure: failure)
                return keepingBuffered ? ElementQueue() : queue
            case .waiting(let waiters):
                var failure = failure
                for waiter in waiters {
                    guard let continuation = waiter.take() else { continue }
                    let result: Result<Element?, SocketError> = failure.map { .failure($0) } ?? .success(nil)
                    if !failureToEveryWaiter { failure = nil }
                    effects.append { continuation.resume(returning: result) }
                }
                elements = .finished(ElementQueue(), failure: nil)
                return ElementQueue()
            }
        }

        /// Resumes the `close()` calls waiting for the socket's end.
        mutating func resumeCloseWaiters(_ effects: inout AsyncEffects) {
            let closeWaiters = self.closeWaiters
            self.closeWaiters = []
            effects.append { for continuation in closeWaiters { continuation.resume() } }
        }

        /// Takes `waiter` out of the waiting calls.
        fileprivate mutating func remove(_ waiter: ElementWaiter<Element>) {
            guard case .waiting(var waiters) = elements else { return }
            elements = .idle(ElementQueue())
            waiters.removeAll { $0 === waiter }
            if !waiters.isEmpty { elements = .waiting(waiters) }
        }

        /// Adds `waiter` to the waiting calls (only while nothing is buffered).
        fileprivate mutating func append(_ waiter: ElementWaiter<Element>) {
            switch elements {
            case .waiting(var waiters):
                elements = .idle(ElementQueue())
                waiters.append(waiter)
                elements = .waiting(waiters)
            case .idle:
                elements = .waiting([waiter])
            case .finished:
                assertionFailure("a next() waits after the elements finished")
            }
        }

        /// The failure a `next()` throws now the elements have finished and none is buffered: once.
        fileprivate mutating func takeFailure() -> SocketError? {
            guard case .finished(let queue, let failure) = elements else { return nil }
            elements = .finished(queue, failure: nil)
            return failure
        }
    }

    let state: LockedValue<State>

    init(_ extra: Extra) {
        state = LockedValue(State(extra: extra))
    }

    /// Runs `body` with the state under the lock, then the effects it collected, after the lock.
    @discardableResult
    func locked<Result>(_ body: (inout State, inout AsyncEffects) -> Result) -> Result {
        var effects = AsyncEffects()
        let result = state.withLock { body(&$0, &effects) }
        effects.run()
        return result
    }

    /// Runs `body` with the state under the lock (no effects).
    @discardableResult
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock(body)
    }

    /// The next element: a buffered one at once, else the next one offered. Once the elements have
    /// finished and none is buffered: their failure, once, then nil. Nil when the task is cancelled
    /// (the elements stay for other calls). `whenTaken` runs under the lock after a buffered element is
    /// taken (its effects after the element's).
    func next(
        whenTaken: (inout State, inout AsyncEffects) -> Void = { _, _ in }
    ) async -> Result<Element?, SocketError> {
        if Task.isCancelled { return .success(nil) }
        let waiter = ElementWaiter<Element>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Element?, SocketError>, Never>) in
                locked { state, effects in
                    if waiter.cancelled {
                        effects.append { continuation.resume(returning: .success(nil)) }
                    } else if let element = state.takeBuffered() {
                        effects.append { continuation.resume(returning: .success(element)) }
                        whenTaken(&state, &effects)
                    } else if state.isFinished {
                        let failure = state.takeFailure()
                        effects.append { continuation.resume(returning: failure.map { .failure($0) } ?? .success(nil)) }
                    } else {
                        waiter.continuation = continuation
                        state.append(waiter)
                    }
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = waiter.cancel() else { return }
                state.remove(waiter)
                effects.append { continuation.resume(returning: .success(nil)) }
            }
        }
    }

    /// Requests the close and returns once the socket has ended: `request` runs under the lock on the
    /// first call only (after `closeRequested` is set); unless the socket had ended, `end` (which must
    /// end the socket: its end calls ``State/resumeCloseWaiters(_:)``) is called, outside the lock.
    func close(request: (inout State, inout AsyncEffects) -> Void, end: () -> Void) async {
        let alreadyEnded = locked { state, effects -> Bool in
            if !state.closeRequested {
                state.closeRequested = true
                request(&state, &effects)
            }
            return state.ended != nil
        }
        guard !alreadyEnded else { return }
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                if state.ended != nil { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if ended {
                continuation.resume()
            } else {
                end()
            }
        }
    }
}
