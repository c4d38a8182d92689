import Dispatch
import Foundation
import Glibc
import NATSClient
import Testing
import TestSupport

/// Regressions for libnats 3.4.1's read loop (Debian 12's libnats; nats.c issue 637, fixed upstream
/// in 3.6.1): `natsConn_processMsg` looks a subscription up, lets go of the connection's lock, copies
/// the message and only then locks the subscription, without a reference to it. A subscription
/// freed in between (libnats' request muxer in `natsConnection_Close`, or one unsubscribed and
/// destroyed) had the message queued into freed memory: glibc's "malloc(): invalid size
/// (unsorted)" in a later allocation (ChatFailoverTests' clean-up, once in 50 full runs), or a
/// crash in `pthread_mutex_lock`.
///
/// Large payloads keep the read loop in that window (copying 512 KB) long enough that without the
/// fixes these tests crash the test process within a few rounds; with an AddressSanitizer build of
/// libnats 3.4.1 they report the heap-use-after-free in the first one.
@Suite struct ReadLoopRaceTests {
    /// Long enough to copy that the read loop spends a while between lookup and lock.
    static let large = Data(repeating: 0x70, count: 512 * 1024)
    static let rounds = 40

    @Test(TestTiming.timeLimit(minutes: 2))
    func closingWhileRepliesArriveLeavesTheReadLoopNothingFreed() async throws {
        let server = try await NATSTestServer.start()
        defer { server.stop() }
        try await runOnAThread {
            let responderConnection = try NATSConnection.connect(testOptions(server))
            defer { responderConnection.close() }
            let responder = try responderConnection.subscribe("echo") { message in
                guard let reply = message.reply else { return }
                try? responderConnection.publish(reply, Self.large)
            }
            defer { responder.unsubscribe() }
            try responderConnection.flush()
            for round in 0..<Self.rounds {
                let connection = try NATSConnection.connect(testOptions(server))
                let answered = Locked(0)
                let requesters = DispatchGroup()
                for _ in 0..<4 {
                    DispatchQueue.global().async(group: requesters) {
                        while !connection.isClosed {
                            if (try? connection.request("echo", Data(), timeout: .seconds(1))) != nil { answered.update { $0 += 1 } }
                        }
                    }
                }
                // Until replies flow, then a little longer: the close lands amid them.
                let deadline = ContinuousClock.now + waitLimit
                while answered.value == 0 && ContinuousClock.now < deadline { usleep(1000) }
                usleep(UInt32(2000 + 1000 * (round % 9)))
                connection.close()
                requesters.wait()
                #expect(answered.value > 0)
            }
        }
    }

    @Test(TestTiming.timeLimit(minutes: 2))
    func releasingASubscriptionWhileMessagesArriveLeavesTheReadLoopNothingFreed() async throws {
        let server = try await NATSTestServer.start()
        defer { server.stop() }
        try await runOnAThread {
            let publisher = try NATSConnection.connect(testOptions(server))
            defer { publisher.close() }
            let connection = try NATSConnection.connect(testOptions(server))
            defer { connection.close() }
            let stop = Locked(false)
            let publishing = DispatchGroup()
            DispatchQueue.global().async(group: publishing) {
                while !stop.value {
                    try? publisher.publish("large", Self.large)
                    try? publisher.flush()
                }
            }
            defer {
                stop.update { $0 = true }
                publishing.wait()
            }
            for round in 0..<(Self.rounds * 5) {
                let received = Locked(0)
                do {
                    let subscription = try connection.subscribe("large") { _ in received.update { $0 += 1 } }
                    let deadline = ContinuousClock.now + waitLimit
                    while received.value == 0 && ContinuousClock.now < deadline { usleep(500) }
                    usleep(UInt32(500 * (round % 5)))
                    withExtendedLifetime(subscription) {}
                }
                // Released above: unsubscribed and destroyed while the next message came in.
                #expect(received.value > 0)
            }
        }
    }
}
