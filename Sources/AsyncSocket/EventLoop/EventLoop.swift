import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One thread that waits for readiness of many descriptors (epoll on Linux, kqueue on Apple platforms),
/// runs tasks other threads hand it, and fires timers from a heap. Every ``TCPSocket`` lives on one loop:
/// all of its state is touched on that loop's thread only.
///
/// Create loops through an ``EventLoopGroup``. Each iteration of the loop waits for events (or the next
/// timer, or a task), then handles the ready descriptors, then the timers that are due, then the tasks.
public final class EventLoop: @unchecked Sendable {
    private struct TaskQueue {
        var tasks: [@Sendable () -> Void] = []
        /// A wake-up is pending: the loop will look at `tasks` before it next blocks.
        var wakeupPending = false
        var stopping = false
        /// Called at the end of the next iteration that finds nothing to do (``whenIdle(_:)``).
        var idleWaiters: [@Sendable (UInt64) -> Void] = []
    }

    private struct Registration {
        var handler: (any Selectable)?
        var generation: UInt32 = 0
        var interest: SelectorInterest = []
    }

    private let selector: LoopSelector
    /// The system calls this loop's sockets make on their descriptors: the kernel's, or a test's
    /// replacement on an embedded loop.
    let io: SocketIO
    /// True for a loop made with ``embedded(_:)``: it runs on the test's thread, when the test says.
    let isEmbedded: Bool
    private let taskQueue = LockedValue(TaskQueue())
    private let clock: ManualClock?
    // Loop-thread state: no dynamic exclusivity checks on the per-event path.
    @exclusivity(unchecked) private var timers = TimerHeap()
    @exclusivity(unchecked) private var timerSequence: UInt64 = 0
    @exclusivity(unchecked) private var registrations: [Registration] = []
    /// The loop's thread: set once, by that thread, before the initializer returns (it waits for it),
    /// and only read after that, from any thread. Read on every ``inEventLoop`` check, so it skips the
    /// compiler's dynamic exclusivity check.
    @exclusivity(unchecked) private var threadID = pthread_self()
    private let stopped = DispatchSemaphore(value: 0)
    /// Iterations of a loop driven by a ``ManualClock`` that handled a descriptor, a timer or a task
    /// (``whenIdle(_:)`` reports it, so ``ManualClock/settle(draining:)`` can tell when nothing moved).
    private let busyIterations = Atomic<UInt64>(0)

    /// A read buffer shared by the sockets of this loop: each readable event reads into it once, so an
    /// idle connection holds no buffer of its own. Used only on the loop thread, within one handler call.
    let scratch: UnsafeMutableRawBufferPointer

    /// The message headers, buffer vectors and addresses of one `recvmmsg`/`sendmmsg` call of this
    /// loop's ``UDPSocket``s (their payloads go in ``scratch``), made on first use: a loop without UDP
    /// sockets holds none. Loop thread only.
    @exclusivity(unchecked) var datagramBatchStorage: DatagramBatch?

    /// Arrays for the reads and the write tags one pass over a socket completes (see ``SpareArrays``).
    @exclusivity(unchecked) var spareEventArrays = SpareArrays<DelegateEvent>()
    @exclusivity(unchecked) var spareTagArrays = SpareArrays<Int>()

    /// One object per type that other modules of the package keep per loop (``loopLocal(_:)``). Loop
    /// thread only.
    @exclusivity(unchecked) var loopLocals: [ObjectIdentifier: AnyObject] = [:]

    /// The size of ``scratch`` in bytes: the most one `read(2)` takes from a socket.
    static let scratchBytes = 256 * 1024

    private init(selector: LoopSelector, io: SocketIO, clock: ManualClock?) {
        self.selector = selector
        self.io = io
        if case .embedded = selector { isEmbedded = true } else { isEmbedded = false }
        self.clock = clock
        scratch = .allocate(byteCount: EventLoop.scratchBytes, alignment: 16)
    }

    /// A loop on a thread of its own, waiting on the kernel's selector and making real system calls.
    convenience init(name: String, clock: ManualClock?) throws(SocketError) {
        self.init(selector: .system(try Selector()), io: .posix, clock: clock)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            threadID = pthread_self()
            started.signal()
            runThread()
            stopped.signal()
        }
        thread.name = name
        thread.start()
        started.wait()
        clock?.attach(self)
    }

    deinit {
        scratch.deallocate()
        datagramBatchStorage?.deallocate()
    }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool { pthread_equal(pthread_self(), threadID) != 0 }

    /// Stops a debug build when called off this loop's thread (SwiftNIO's `assertInEventLoop`): the
    /// check for code that touches loop-confined state. Compiled out of release builds.
    @inline(__always)
    public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "loop-confined code ran off its event loop", file: file, line: line)
    }

    /// Runs `body` on the loop thread and returns its result, blocking the calling thread until then
    /// (SwiftNIO's `submit(_:).wait()`); inline when called on the loop thread. Never call it from a
    /// loop thread for another loop of a group that may be waiting on this one.
    public func runAndWait<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        if inEventLoop { return body() }
        let result = LockedValue<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        execute {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!  // set before the signal
    }

    /// Runs `task` on the loop thread, after the events and timers of the current iteration, in the
    /// order tasks were submitted. Safe from any thread, including the loop's own.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let wake = taskQueue.withLock { queue -> Bool in
            queue.tasks.append(task)
            if queue.wakeupPending { return false }
            queue.wakeupPending = true
            return true
        }
        if wake && !inEventLoop { selector.wakeup() }
    }

    /// Runs `task` on the loop thread after `delay` (measured from now on the loop's clock). Safe from any
    /// thread. Cancel it with ``Scheduled/cancel()``.
    @discardableResult
    public func scheduleTask(in delay: Duration, _ task: @escaping @Sendable () -> Void) -> Scheduled {
        scheduleTask(atNanoseconds: now() &+ delay.nanosecondsClamped, task)
    }

    /// Runs `task` on the loop thread once the loop's clock (``now()``) reaches `deadline` nanoseconds.
    func scheduleTask(atNanoseconds deadline: UInt64, _ task: @escaping @Sendable () -> Void) -> Scheduled {
        let scheduled = Scheduled(loop: self)
        let guarded: @Sendable () -> Void = { if !scheduled.isCancelled { task() } }
        if inEventLoop {
            scheduled.entry = insertTimer(deadline: deadline, guarded)
        } else {
            execute { [self] in
                guard !scheduled.isCancelled else { return }
                scheduled.entry = insertTimer(deadline: deadline, guarded)
            }
        }
        return scheduled
    }

    /// Nanoseconds on the loop's monotonic clock (`CLOCK_MONOTONIC`, or the ``ManualClock`` the loop was
    /// created with): the time its timers are measured in. Only differences between readings mean anything.
    public func now() -> UInt64 {
        if let clock { return clock.nanoseconds }
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func insertTimer(deadline: UInt64, _ task: @escaping () -> Void) -> TimerEntry {
        timerSequence &+= 1
        let entry = TimerEntry(deadline: deadline, sequence: timerSequence, task: task)
        timers.insert(entry)
        return entry
    }

    /// Removes a timer. Loop thread only.
    func cancelTimer(_ entry: TimerEntry) {
        entry.task = nil
        timers.remove(entry)
    }

    /// The timers in the heap (``pendingTimerCount``).
    var timerCount: Int { timers.count }

    /// Wakes the loop so it looks at the clock again (used by ``ManualClock``).
    func wakeup() { selector.wakeup() }

    /// Calls `body` on the loop thread at the end of the next iteration that finds no ready descriptor
    /// (a zero-timeout poll), no timer due and no task: the loop is idle at the current time. `body`
    /// gets the number of busy iterations the loop had made by then (counted on loops driven by a
    /// ``ManualClock`` only), so two calls with the same number saw nothing happen in between. Safe from
    /// any thread. Threaded loops only (an embedded loop is idle whenever ``run()`` returns).
    func whenIdle(_ body: @escaping @Sendable (UInt64) -> Void) {
        precondition(!isEmbedded, "whenIdle(_:) is for threaded loops; an embedded loop is idle after run()")
        let stopping = taskQueue.withLock { queue in
            if !queue.stopping { queue.idleWaiters.append(body) }
            return queue.stopping
        }
        // A stopped loop does nothing more: idle for good.
        if stopping { body(busyIterations.load(ordering: .relaxed)) } else { selector.wakeup() }
    }

    /// Stops the loop after the current iteration (running the tasks already submitted) and waits for
    /// its thread to end. Sockets still registered are not closed. Call from outside the loop.
    func stop() {
        if isEmbedded {
            run()
            return
        }
        clock?.detach(self)
        taskQueue.withLock { $0.stopping = true }
        selector.wakeup()
        stopped.wait()
    }

    // MARK: Registrations (loop thread only)

    private func token(_ fd: Int32) -> UInt64 {
        UInt64(registrations[Int(fd)].generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// Starts delivering readiness of `fd` to `handler`, which the loop holds strongly until ``deregister(_:)``.
    func register(_ fd: Int32, handler: any Selectable, interest: SelectorInterest) throws(SocketError) {
        let index = Int(fd)
        if index >= registrations.count {
            registrations.append(contentsOf: repeatElement(Registration(), count: index + 1 - registrations.count))
        }
        registrations[index].handler = handler
        registrations[index].generation &+= 1
        registrations[index].interest = []
        try setInterest(fd, interest)
    }

    /// Changes what `fd` is watched for. An empty interest removes it from the selector entirely, so
    /// not even a hang-up wakes the loop (a paused reader with a full buffer stays quiet).
    func setInterest(_ fd: Int32, _ interest: SelectorInterest) throws(SocketError) {
        let index = Int(fd)
        guard index < registrations.count, registrations[index].handler != nil else { return }
        let old = registrations[index].interest
        guard old != interest else { return }
        registrations[index].interest = interest
        if interest.isEmpty {
            selector.deregister(fd)
        } else if old.isEmpty {
            try selector.register(fd, token: token(fd), interest: interest)
        } else {
            try selector.reregister(fd, token: token(fd), interest: interest)
        }
    }

    /// Stops delivering events for `fd` and releases its handler. Call before closing the descriptor.
    func deregister(_ fd: Int32) {
        let index = Int(fd)
        guard index < registrations.count, registrations[index].handler != nil else { return }
        if !registrations[index].interest.isEmpty { selector.deregister(fd) }
        registrations[index].handler = nil
        registrations[index].interest = []
    }

    // MARK: Embedded mode (tests)

    /// A loop for deterministic tests, in the manner of SwiftNIO's `EmbeddedEventLoop`: no thread and
    /// no kernel selector. It belongs to the thread that creates it (``inEventLoop`` is true there and
    /// only there; use it from a synchronous test), runs only inside ``run()`` and ``advance(by:)``,
    /// and its time is virtual, starting at an arbitrary instant and moving only by ``advance(by:)``.
    /// Its sockets' system calls go to `io`, whose scripted readiness stands in for epoll's.
    ///
    /// Never call ``runAndWait(_:)`` on it from another thread: nothing would run the task.
    package static func embedded(_ io: some SystemCalls & ScriptedReadiness) -> EventLoop {
        EventLoop(selector: .embedded(EmbeddedSelector(readiness: io)), io: SocketIO(replacement: io), clock: ManualClock())
    }

    /// Runs an embedded loop until it has nothing left to do: the ready descriptors' handlers, the
    /// timers due at the current virtual time and the queued tasks, round after round (each as one
    /// iteration of the threaded loop: events, then timers, then tasks) until a round finds none.
    /// Only on the loop's own thread.
    package func run() {
        precondition(isEmbedded, "run() drives embedded loops only")
        assertInEventLoop()
        var rounds = 0
        while true {
            var handled = false
            do {
                try selector.wait(timeoutNanoseconds: 0) { event in
                    handled = true
                    dispatch(event)
                }
            } catch {
                fatalError("AsyncSocket: the embedded selector failed: \(error)")
            }
            let ranTimers = runExpiredTimers()
            let ranTasks = runTasks()
            guard handled || ranTimers || ranTasks else { return }
            rounds += 1
            // A descriptor reported ready that no handler ever drains would spin here forever.
            precondition(rounds < 1_000_000, "the embedded loop never settles: a descriptor stays ready")
        }
    }

    /// Moves an embedded loop's virtual time forward by `duration`, then ``run()``s it: exactly the
    /// timers whose deadline is now reached fire (one nanosecond short of a deadline fires nothing).
    package func advance(by duration: Duration) {
        precondition(isEmbedded, "advance(by:) drives embedded loops only; use a ManualClock for threaded ones")
        clock?.moveForward(by: duration)
        run()
    }

    // MARK: The loop

    private func runThread() {
        while true {
            let (hasTasks, stopping, waitingForIdle) = taskQueue.withLock {
                ($0.tasks.isEmpty == false, $0.stopping, $0.idleWaiters.isEmpty == false)
            }
            if stopping {
                // Tasks submitted before the stop (closing sockets, say) still run; waiters for idleness
                // registered until now are answered (later ones at once, by whenIdle).
                runTasks()
                runIdleWaiters()
                return
            }
            var timeout: UInt64? = nil
            if hasTasks || waitingForIdle {
                timeout = 0
            } else if let next = timers.first {
                let current = now()
                if clock != nil {
                    timeout = next.deadline <= current ? 0 : nil
                } else {
                    timeout = next.deadline > current ? next.deadline - current : 0
                }
            }
            var handled = false
            do {
                try selector.wait(timeoutNanoseconds: timeout) { event in
                    handled = true
                    dispatch(event)
                }
            } catch {
                fatalError("AsyncSocket: the event loop's selector failed: \(error)")
            }
            let ranTimers = runExpiredTimers()
            let ranTasks = runTasks()
            if handled || ranTimers || ranTasks {
                if clock != nil { busyIterations.add(1, ordering: .relaxed) }
            } else if waitingForIdle {
                runIdleWaiters()
            }
        }
    }

    /// Calls the ``whenIdle(_:)`` bodies registered so far.
    private func runIdleWaiters() {
        let waiters = taskQueue.withLock { queue in
            defer { queue.idleWaiters.removeAll() }
            return queue.idleWaiters
        }
        let busy = busyIterations.load(ordering: .relaxed)
        for waiter in waiters { waiter(busy) }
    }

    private func dispatch(_ event: SelectorEvent) {
        let index = Int(UInt32(truncatingIfNeeded: event.token))
        guard index < registrations.count else { return }
        let registration = registrations[index]
        guard let handler = registration.handler, UInt32(event.token >> 32) == registration.generation else { return }
        if event.writable && registration.interest.contains(.write) { handler.selectorWritable() }
        // The write handler may have closed the descriptor or another handler may own it now.
        guard registrations[index].handler === handler, registrations[index].interest.contains(.read) else { return }
        if event.readable { handler.selectorReadable() }
    }

    /// Runs the timers that are due; returns whether there were any.
    @discardableResult
    private func runExpiredTimers() -> Bool {
        guard !timers.isEmpty else { return false }
        let current = now()
        var ran = false
        while let entry = timers.popExpired(now: current) {
            let task = entry.task
            entry.task = nil
            task?()
            ran = true
        }
        return ran
    }

    /// Runs the tasks submitted so far; returns whether there were any.
    @discardableResult
    private func runTasks() -> Bool {
        let tasks = taskQueue.withLock { queue -> [@Sendable () -> Void] in
            queue.wakeupPending = false
            guard !queue.tasks.isEmpty else { return [] }
            let tasks = queue.tasks
            queue.tasks.removeAll(keepingCapacity: true)
            return tasks
        }
        for task in tasks { task() }
        return !tasks.isEmpty
    }
}

/// A task scheduled on an ``EventLoop`` with ``EventLoop/scheduleTask(in:_:)``.
public final class Scheduled: @unchecked Sendable {
    private let loop: EventLoop
    private let cancelled = Atomic(false)
    /// Set and read on the loop thread only.
    fileprivate var entry: TimerEntry?

    fileprivate init(loop: EventLoop) { self.loop = loop }

    fileprivate var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Cancels the task if it has not run yet. Safe from any thread; from the loop's own thread the task
    /// is guaranteed not to run after this returns.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        if loop.inEventLoop {
            if let entry { loop.cancelTimer(entry) }
        } else {
            loop.execute { [self] in if let entry { loop.cancelTimer(entry) } }
        }
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to 0…UInt64.max (negative durations count as zero).
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        return whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}
