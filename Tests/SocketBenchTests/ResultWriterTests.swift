import Foundation
import Testing
@testable import SocketBench

@Suite struct ResultWriterTests {
    /// Pipeline, 2 s measured: 1,000 messages of 68 bytes (100 of 1 µs, 900 of 2 µs), one error.
    private func sample(label: String = "ours/pipe") -> BenchResult {
        var options = ClientOptions(mode: .pipeline)
        options.label = label
        options.duration = 2
        var latency = LatencyHistogram()
        for index in 0..<1_000 { latency.record(index < 100 ? 1_000 : 2_000) }
        return BenchResult(
            options: options, seconds: 2, messages: 1_000, bytes: 68_000, latency: latency, errors: 1,
            mismatches: 0, connected: 100, connectFailures: 0, alive: 99, heartbeatsSent: 0,
            heartbeatsEchoed: 0, heartbeatsMissed: 0, serverRSSKilobytes: 5_120)
    }

    @Test func theResultLineStartsWithLoadgensKeysInOrder() {
        let line = ResultWriter.resultLine(sample())
        #expect(
            line.hasPrefix(
                "RESULT label=ours/pipe mode=pipeline conns=100 size=64 depth=16 secs=2.000 msgs=1000 msgs_per_s=500 "
                    + "mb_per_s=0.03 p50_us=2.0 p99_us=2.0 p999_us=2.0 errors=1 mismatches=0 alive=99 server_rss_kb=5120 loops=1 "
                    + "duration_s=2.000 warmup_s=2.0 bytes_echoed=68000 lat_mean_us=1.9 max_us=2.0 connected=100 connect_fail=0 "))
        // loadgen's keys, then socket-bench's own: the protocol and the WebSocket figures.
        #expect(
            line.hasSuffix(
                " srv_rss_end_kb=5120 proto=lp4 deflate_accepted=0 server_rss_per_conn_b=-1 server_cpu_s=-1 server_cpu_us_per_msg=-1 sent_ratio=-1 echo_ratio=-1"
            ))
        #expect(!sample().isClean)
    }

    @Test func spacesInTheLabelBecomeUnderscores() {
        #expect(ResultWriter.resultLine(sample(label: "a b")).hasPrefix("RESULT label=a_b mode="))
    }

    @Test func csvGetsAHeaderOnceAndARowPerRun() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID()).csv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ResultWriter.appendCSV(sample(), to: path)
        try ResultWriter.appendCSV(sample(label: "x,y"), to: path)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("label,mode,conns,size,depth,secs,msgs,msgs_per_s,mb_per_s,p50_us,p99_us,p999_us,errors,"))
        #expect(lines[1].hasPrefix("ours/pipe,pipeline,100,64,16,2.000,1000,500,0.03,"))
        #expect(lines[2].hasPrefix("\"x,y\",pipeline,"))
    }

    @Test func residentMemoryComesFromTheVmRSSLine() {
        #expect(ProcessStatus.residentKilobytes(inStatus: "Name:\tx\nVmPeak:\t  9 kB\nVmRSS:\t   4321 kB\n") == 4321)
        #expect(ProcessStatus.residentKilobytes(inStatus: "Name:\tkthreadd\n") == nil)
        #expect(ProcessStatus.residentKilobytes(of: getpid()).map { $0 > 0 } == true)
    }

    /// proc(5): utime and stime are fields 14 and 15 of /proc/PID/stat; the command name (field 2) may
    /// hold spaces and parentheses.
    @Test func cpuTimeComesFromTheStatLinesFields14And15() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 120 0 0 0 731 269 0 0 20 0 3 0 12345 1000 10"
        #expect(ProcessStatus.cpuTicks(inStat: stat) == 1_000)
        #expect(ProcessStatus.cpuTicks(inStat: "4242 (x) S 1 2") == nil)
        #expect(ProcessStatus.cpuSeconds(of: getpid()).map { $0 >= 0 } == true)
    }
}
