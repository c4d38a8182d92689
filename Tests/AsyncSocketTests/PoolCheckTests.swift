import Testing
import TestSupport

/// ``expectOffThePool(_:sourceLocation:)``, the debug check the blocking test helpers make.
@Suite struct PoolCheckTests {
    @Test func aBlockingHelperCalledOnTheCooperativePoolIsReported() async {
        withKnownIssue { expectOffThePool("a blocking helper") }
    }

    @Test(.offThePool) func offThePoolNothingIsReported() async {
        expectOffThePool("a blocking helper")
    }

    @Test func onAThreadOfItsOwnNothingIsReported() async {
        await runOnAThread { expectOffThePool("a blocking helper") }
    }
}
