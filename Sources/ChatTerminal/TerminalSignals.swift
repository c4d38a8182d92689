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
/// ``uninstall()`` puts back every handler that was there before.
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
        restoreDescriptor = terminal
        signalWakeDescriptor = wakeDescriptor
        for signal in forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(signalWakeDescriptor, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal))
        }
        for signal in fatal {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                if restoreDescriptor >= 0 {
                    _ = tcsetattr(restoreDescriptor, TCSAFLUSH, savedSettings)
                    var newline: (UInt8, UInt8) = (0x0D, 0x0A)
                    _ = withUnsafeBytes(of: &newline) { write(restoreDescriptor, $0.baseAddress, 2) }
                }
                sigaction(signal, previousActions + Int(signal), nil)
                raise(signal)  // blocked until this handler returns, then the previous handler's
            }
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal))
        }
    }

    /// Puts back the handlers there were before ``install(wakeDescriptor:terminal:settings:)``.
    static func uninstall() {
        for signal in forwarded + fatal { sigaction(signal, previousActions + Int(signal), nil) }
        signalWakeDescriptor = -1
        restoreDescriptor = -1
    }
}

/// The wake pipe's write end for the forwarded signals' handler; -1 when none runs.
nonisolated(unsafe) private var signalWakeDescriptor: Int32 = -1
/// The terminal the crash handler restores; -1 when none.
nonisolated(unsafe) private var restoreDescriptor: Int32 = -1
/// The settings the crash handler restores.
nonisolated(unsafe) private let savedSettings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
/// The handlers in place before ours, by signal number.
nonisolated(unsafe) private let previousActions: UnsafeMutablePointer<sigaction> = {
    let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    actions.initialize(repeating: sigaction(), count: 65)
    return actions
}()
