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
}
