import Foundation
import SocketBench
import TestSupport
import Testing
@testable import ChatBench
import ChatServer

/// About a second of each `socket-bench client chat` throughput and latency run against an in-process chat server on a SQLite file: that every
/// message is acknowledged once and delivered once and the store can be measured, not how fast.
@Suite struct ChatBenchSmokeTests {
    @Test(.offThePool) func throughputLatencyAndStoreSizeRunCleanAgainstAChatServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chat-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try SQLiteMessageStore(path: path)
        var limits = ChatServer.Limits()
        limits.loginTimeout = TestTiming.hangLimit(.seconds(10))  // only a hang reaches it, under ThreadSanitizer too
        let server = ChatServer(
            host: "127.0.0.1", port: 0, store: store, passwordHasher: PasswordHasher(limits: .minimum), limits: limits)
        try server.start()

        var throughputOptions = ThroughputOptions()
        throughputOptions.server = ServerAddress(host: "127.0.0.1", port: server.port)
        throughputOptions.senders = 2
        throughputOptions.messages = 300
        throughputOptions.window = 32
        throughputOptions.serverPID = getpid()
        let throughput = await onAThread { [throughputOptions] in ChatBench.runThroughput(throughputOptions) }

        var sharedOptions = throughputOptions
        sharedOptions.receivers = .shared
        sharedOptions.messages = 100
        let shared = await onAThread { [sharedOptions] in ChatBench.runThroughput(sharedOptions) }

        var latencyOptions = LatencyOptions()
        latencyOptions.server = ServerAddress(host: "127.0.0.1", port: server.port)
        latencyOptions.rate = 200
        latencyOptions.seconds = 0.5
        let latency = await onAThread { [latencyOptions] in ChatBench.runLatency(latencyOptions) }
        server.stop()
        store.close()

        for result in [throughput, shared] {
            #expect(result.isClean, "\(result.summary)")
            #expect(result.counts.sent == result.expected)
            #expect(result.counts.stored == result.expected && result.counts.storedDuplicates == 0)
            #expect(result.counts.delivered == result.expected && result.counts.deliveredDuplicates == 0)
            #expect(result.lost == 0 && result.counts.gaps == 0 && result.counts.resentDeliveries == 0)
            // Each sender's own session gets its messages too, but the run ends at the last `stored` and
            // delivery: the last echoes may still be on their way.
            #expect(result.counts.echoes <= result.expected)
            #expect(result.timing.storedLatency.count == result.expected)
            #expect(result.cpu.serverCPUSeconds != nil)
        }
        #expect(latency.isClean, "\(latency.summary)")
        #expect(latency.counts.sent == 100 && latency.counts.stored == 100 && latency.counts.delivered == 100)
        #expect(latency.lost == 0 && latency.duplicates == 0 && latency.counts.gaps == 0)
        #expect(latency.timing.deliveryLatency.count == 100 && latency.timing.storedLatency.count == 100)
        #expect(
            latency.timing.deliveryLatency.value(0.5) > 0
                && latency.timing.deliveryLatency.max >= latency.timing.deliveryLatency.value(0.99))

        let size = try StoreSize.measure(path: path)
        #expect(size.messages == 600 + 200 + 100)
        #expect(size.checkpointComplete && size.walBytes == 0)
        #expect(size.fileBytes > 0 && size.bytesPerThousandMessages > 0)
        #expect(size.textBytes == 900 * 32)
    }

    @Test func aRunAgainstNoServerReportsTheFailureAtOnce() async {
        var options = ThroughputOptions()
        options.server = ServerAddress(host: "127.0.0.1", port: unusedLoopbackPort())
        options.messages = 10
        let result = await onAThread { [options] in ChatBench.runThroughput(options) }
        #expect(!result.isClean)
        #expect(result.problems.connectionFailures.count >= 1)
        #expect(result.counts.stored == 0 && result.lost == result.expected)
    }

    private func onAThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result { await runOnAThread(body) }
}

/// The bookkeeping that decides "exactly once, in order".
@Suite struct ChatBenchLedgerTests {
    @Test func ledgerCountsFirstSightingsDuplicatesAndIdsNeverSent() {
        var ledger = MessageLedger(count: 3)
        let firsts = [ledger.record(1), ledger.record(3), ledger.record(1), ledger.record(0), ledger.record(4)]
        #expect(firsts == [true, true, false, false, false])
        #expect(ledger.distinct == 2 && ledger.duplicates == 1 && ledger.unknown == 2)
        #expect(ledger.contains(3) && !ledger.contains(2))
    }

    @Test func positionsTellNextDuplicateAndGap() {
        var positions = ConversationPositions()
        let arrivals = [1, 2, 2, 5].map { positions.arrive("direct:a b", sequence: $0) } + [positions.arrive("room", sequence: 1)]
        #expect(arrivals == [.next, .next, .duplicate, .gap(missing: 2), .next])
        #expect(positions.positions == ["direct:a b": 5, "room": 1])
    }

    @Test func messageTextCarriesItsIdAndHasTheRequestedSize() {
        let text = MessageText.make(id: 17, bytes: 32)
        #expect(text.utf8.count == 32 && text.hasPrefix("17 "))
        #expect(MessageText.id(in: text) == 17)
        #expect(MessageText.make(id: 123_456, bytes: 3) == "123456 ")
        #expect(MessageText.id(in: "hello") == nil && MessageText.id(in: "x1 y") == nil && MessageText.id(in: "-1 y") == nil)
    }

    @Test func percentilesAreRanksOfTheSortedSamples() {
        let percentiles = Percentiles((1...100).reversed().map { UInt64($0) })
        #expect(percentiles.value(0.5) == 51 && percentiles.value(0.99) == 100 && percentiles.value(0) == 1)
        #expect(percentiles.max == 100 && Percentiles([]).value(0.5) == 0)
    }

    @Test func optionsParseAndRefuseWhatDoesNotFit() throws {
        let throughput = try ThroughputOptions.parse([
            "--server", "127.0.0.1:9", "--senders", "8", "--messages", "50_000", "--window", "64", "--receivers", "shared"
        ])
        #expect(
            throughput.server == ServerAddress(host: "127.0.0.1", port: 9) && throughput.senders == 8 && throughput.messages == 50_000
                && throughput.window == 64)
        #expect(throughput.receivers == .shared)
        #expect(throws: ArgumentError.self) { try ThroughputOptions.parse(["--receivers", "all"]) }
        #expect(throws: ArgumentError.self) { try ThroughputOptions.parse(["--server", "127.0.0.1:0"]) }
        let latency = try LatencyOptions.parse(["--rate", "2000", "--duration", "1.5"])
        #expect(latency.total == 3_000 && latency.rate == 2_000)
        #expect(LatencyOptions().rate == 1_000)
        #expect(throws: ArgumentError.self) { try LatencyOptions.parse(["--duration"]) }
    }

    @Test func processStatTimesAreCountedFromTheLastParenthesis() {
        let stat = "42 (a) b (c)) S 1 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 1 0 0"
        #expect(ProcessTimes.cpuSeconds(inStat: stat, ticksPerSecond: 100) == 3.0)
    }
}
