import Foundation
import Testing

/// How much slower than a plain debug build this test process runs, for the deadlines that only a
/// hang should reach: ThreadSanitizer runs code 5–15 times slower (docs/TESTING.md), so under it
/// every such deadline of TestSupport (``EventRecorder/next(within:)``, ``waitUntil(within:_:_:)``,
/// ``ChildProcess``, ``ServerProcess``) is ``slowdown`` times as long; what a test waits for is the
/// same. Deadlines the code under test keeps (a login timeout, a heartbeat) are not scaled: a test
/// that sets one gives it a bound only a hang reaches, or runs it in virtual time.
public enum TestTiming {
    /// 10 under ThreadSanitizer, 1 otherwise.
    public static let slowdown = isThreadSanitized ? 10 : 1

    /// True when this process runs under ThreadSanitizer (its runtime is linked in).
    public static let isThreadSanitized = dlsym(nil, "__tsan_init") != nil  // nil: RTLD_DEFAULT

    /// `limit` × ``slowdown``: the deadline for a wait that only a hang should reach.
    public static func hangLimit(_ limit: Duration) -> Duration { limit * slowdown }

    /// `seconds` × ``slowdown``: a timeout of the library's GCDAsyncSocket-style calls (`withTimeout:`)
    /// that a test on real sockets sets as a bound only a hang should reach.
    public static func hangTimeout(_ seconds: TimeInterval) -> TimeInterval { seconds * Double(slowdown) }

    /// A test's or suite's time limit, `minutes` × ``slowdown``.
    public static func timeLimit(minutes: Int) -> TimeLimitTrait { .timeLimit(.minutes(minutes * slowdown)) }
}
