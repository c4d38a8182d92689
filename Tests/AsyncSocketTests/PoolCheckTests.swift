import Testing
import TestSupport

/// ``expectOffThePool(_:sourceLocation:)``, the debug check the blocking test helpers make, and
/// ``isOnTheCooperativePool()``, what it asks.
@Suite struct PoolCheckTests {
    @Test func aBlockingHelperCalledOnTheCooperativePoolIsReported() async {
        #expect(isOnTheCooperativePool())
        withKnownIssue {
            expectOffThePool("a blocking helper")
        } matching: { issue in
            issue.comments.map(\.rawValue) == [
                "a blocking helper blocks a thread of Swift's cooperative pool: run it in runOnAThread, or mark the test .cpuBound or .offThePool"
            ]
        }
    }

    @Test(.offThePool) func offThePoolNothingIsReported() async {
        #expect(!isOnTheCooperativePool())
        expectOffThePool("a blocking helper")
    }

    @Test func onAThreadOfItsOwnNothingIsReported() async {
        #expect(await runOnAThread { isOnTheCooperativePool() } == false)
        await runOnAThread { expectOffThePool("a blocking helper") }
    }

    /// The stall watchdog quotes where the tests' own frames of gdb's backtrace are, each once, its
    /// own left out.
    @Test func theStallWatchdogQuotesTheTestFramesOfABacktrace() {
        let backtrace = """
            Thread 3 (Thread 0x7f1 (LWP 12) "swift-test"):
            #0  0x00007f2 in futex_wait (private=0, expected=2, futex_word=0x5) at ../sysdeps/nptl/futex-internal.h:146
            #1  0x00005555 in closure #1 in PoolTests.blocks() () at /work/main/Tests/AsyncSocketTests/PoolTests.swift:12
            #2  PoolTests.blocks() () at /work/main/Tests/AsyncSocketTests/PoolTests.swift:10
            #3  0x00005555 in closure #1 in PoolTests.blocks() () at /work/main/Tests/AsyncSocketTests/PoolTests.swift:12
            #4  0x00005556 in $s11TestSupport13StallWatchdogO5watchyyFZ () at /work/main/Tests/TestSupport/StallWatchdog.swift:39
            #5  0x00007f3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:447
            """
        #expect(
            StallWatchdog.testFrames(in: backtrace) == [
                "Tests/AsyncSocketTests/PoolTests.swift:12", "Tests/AsyncSocketTests/PoolTests.swift:10"
            ])
    }
}
