import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// The process's signal handlers while a ``TerminalUI`` runs (one at a time: signal dispositions are
/// the process's).
///
/// - SIGINT, SIGTERM, SIGHUP, SIGQUIT (``ending``), SIGWINCH, SIGTSTP and SIGCONT write their number
///   as one byte to the UI's wake pipe, which its terminal thread reads (a write(2) is
///   async-signal-safe); system calls interrupted by them restart (`SA_RESTART`).
/// - SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP (``fatal``: a crash, a Swift runtime trap)
///   put the terminal's saved settings back (tcsetattr(3), async-signal-safe), write a newline, then
///   reinstate the handler that was there before and raise the signal again, so the crash goes on as
///   it would have (a backtrace, a core dump) with the terminal usable.
///
/// ``uninstall()`` puts back every handler that was there before; a forwarded signal sent before it
/// is called is ours, never the previous handler's, even if it had not been delivered yet.
enum TerminalSignals {
    /// The signals that end the session.
    static let ending: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    /// Every signal written to the wake pipe.
    static let forwarded: [Int32] = ending + [SIGWINCH, SIGTSTP, SIGCONT]
    /// The signals of a crash.
    static let fatal: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]

    /// Installs the handlers: forwarded signals to `wakeDescriptor`, crashes restoring `settings`
    /// on `terminal`.
    static func install(wakeDescriptor: Int32, terminal: Int32, settings: termios) {
        savedSettings.pointee = settings
        // Stored before any handler can run, so the handlers find these globals initialized.
        restoreDescriptor.store(terminal, ordering: .sequentiallyConsistent)
        signalWakeDescriptor.store(wakeDescriptor, ordering: .sequentiallyConsistent)
        handlersRunning.store(0, ordering: .sequentiallyConsistent)
        for signal in forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                handlersRunning.add(1, ordering: .sequentiallyConsistent)
                let saved = errno
                forward(signal)
                errno = saved
                handlersRunning.subtract(1, ordering: .sequentiallyConsistent)
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal))
        }
        for signal in fatal {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                handlersRunning.add(1, ordering: .sequentiallyConsistent)
                let terminal = restoreDescriptor.load(ordering: .sequentiallyConsistent)
                if terminal >= 0 {
                    _ = tcsetattr(terminal, TCSAFLUSH, savedSettings)
                    var newline: (UInt8, UInt8) = (0x0D, 0x0A)
                    _ = withUnsafeBytes(of: &newline) { write(terminal, $0.baseAddress, 2) }
                }
                handlersRunning.subtract(1, ordering: .sequentiallyConsistent)
                sigaction(signal, previousActions + Int(signal), nil)
                raise(signal)  // blocked until this handler returns, then the previous handler's
            }
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal))
        }
    }

    /// Puts back the handlers there were before ``install(wakeDescriptor:terminal:settings:)``;
    /// returns once no handler of ours runs, so the wake pipe and the terminal may be closed then.
    ///
    /// A process-directed signal (kill(2), the terminal's keys) is delivered by whichever thread does
    /// not block it, when that thread next runs (a Dispatch worker blocks the ending signals, so it is
    /// often the main thread, which may be waiting for a processor): one sent just before this call
    /// may still be pending. Such signals, and this thread's, are taken here with sigtimedwait(2) and
    /// written to the wake pipe as the handler would have; put back first, the previous handler (for
    /// SIGTERM the default action: the process's death) would have had them.
    static func uninstall() {
        var taken = sigset_t()
        sigemptyset(&taken)
        for signal in forwarded { sigaddset(&taken, signal) }
        var mask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &taken, &mask)
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        while true {
            let signal = sigtimedwait(&taken, nil, &noWait)
            if signal > 0 {
                forward(signal)
            } else if errno != EINTR {
                break  // EAGAIN: none pending
            }
        }
        for signal in forwarded + fatal { sigaction(signal, previousActions + Int(signal), nil) }
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        // A handler that started before the line above may still be writing to the descriptors: they
        // are forgotten first (a handler starting now writes nowhere), then the running ones awaited.
        signalWakeDescriptor.store(-1, ordering: .sequentiallyConsistent)
        restoreDescriptor.store(-1, ordering: .sequentiallyConsistent)
        while handlersRunning.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
    }
}

/// Writes `signal`'s number to the wake pipe, if any (async-signal-safe: an atomic load, write(2)).
private func forward(_ signal: Int32) {
    var byte = UInt8(truncatingIfNeeded: signal)
    let descriptor = signalWakeDescriptor.load(ordering: .sequentiallyConsistent)
    if descriptor >= 0 { _ = write(descriptor, &byte, 1) }
}

/// The wake pipe's write end for the forwarded signals' handler; -1 when none runs.
private let signalWakeDescriptor = Atomic<Int32>(-1)
/// The terminal the crash handler restores; -1 when none.
private let restoreDescriptor = Atomic<Int32>(-1)
/// How many of our handlers are running now (``TerminalSignals/uninstall()`` waits for none).
private let handlersRunning = Atomic<Int>(0)
/// The settings the crash handler restores.
nonisolated(unsafe) private let savedSettings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
/// The handlers in place before ours, by signal number.
nonisolated(unsafe) private let previousActions: UnsafeMutablePointer<sigaction> = {
    let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    actions.initialize(repeating: sigaction(), count: 65)
    return actions
}()
