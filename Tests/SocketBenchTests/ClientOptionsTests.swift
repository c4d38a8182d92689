import Foundation
import Testing
@testable import SocketBench

@Suite struct ClientOptionsTests {
    @Test func parsesEveryOption() throws {
        let options = try ClientOptions.parse([
            "pipeline", "--host", "127.0.0.9", "--port", "9400", "-c", "7", "-s", "128", "-D", "4", "-d", "2.5",
            "-w", "0.5", "-H", "3", "--loops", "2", "--csv", "/tmp/x.csv", "--label", "ours", "--server-pid", "1234"
        ])
        var expected = ClientOptions(mode: .pipeline)
        expected.host = "127.0.0.9"
        expected.port = 9400
        expected.connections = 7
        expected.size = 128
        expected.depth = 4
        expected.duration = 2.5
        expected.warmup = 0.5
        expected.heartbeat = 3
        expected.loops = 2
        expected.csvPath = "/tmp/x.csv"
        expected.label = "ours"
        expected.serverPID = 1234
        #expect(options == expected)
    }

    @Test func longNamesAreTheShortOnes() throws {
        let short = try ClientOptions.parse(["bulk", "-c", "2", "-s", "9", "-D", "3", "-d", "1", "-w", "0", "-H", "4"])
        let long = try ClientOptions.parse([
            "bulk", "--connections", "2", "--size", "9", "--depth", "3", "--duration", "1",
            "--warmup", "0", "--heartbeat", "4"
        ])
        #expect(short == long)
    }

    @Test func eachModeHasLoadgensDefaults() throws {
        let pingpong = try ClientOptions.parse(["pingpong"])
        #expect(pingpong.connections == 1 && pingpong.size == 64 && pingpong.depth == 1)
        #expect(pingpong.duration == 10 && pingpong.warmup == 2 && pingpong.port == 9100 && pingpong.host == "127.0.0.1")
        #expect(pingpong.loops == 1 && pingpong.csvPath == nil && pingpong.label == "" && pingpong.serverPID == nil)
        let pipeline = try ClientOptions.parse(["pipeline"])
        #expect(pipeline.connections == 100 && pipeline.size == 64 && pipeline.depth == 16)
        let bulk = try ClientOptions.parse(["bulk"])
        #expect(bulk.connections == 1 && bulk.size == 65_536 && bulk.depth == 32 && bulk.frameSize == 65_540)
        let idle = try ClientOptions.parse(["idle"])
        #expect(idle.connections == 10_000 && idle.size == 16 && idle.depth == 1)
        #expect(idle.heartbeat == 30 && idle.duration == 30 && idle.warmup == 0)
    }

    /// The idle heartbeat clock's tick (default 0: each heartbeat at its own time) and the go file
    /// (default none: the heartbeats start once connected).
    @Test func idleTakesATickAndAGoFile() throws {
        let idle = try ClientOptions.parse(["idle", "--tick", "1.5", "--go-file", "/tmp/go"])
        #expect(idle.tick == 1.5 && idle.goFile == "/tmp/go")
        let defaults = try ClientOptions.parse(["idle"])
        #expect(defaults.tick == 0 && defaults.goFile == nil)
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["idle", "--tick", "-1"]) }
    }

    /// Regression: `-D 8` was silently ignored for the modes that always keep one frame in flight.
    @Test func pingpongAndIdleKeepOneFrameInFlightAndSayWhenToldOtherwise() throws {
        #expect(try ClientOptions.parse(["pingpong", "-D", "1"]).depth == 1)
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["pingpong", "-D", "8"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["idle", "-D", "8"]) }
    }

    /// Regression: a bad --csv path was found only after the whole run.
    @Test func aCSVPathIsCheckedBeforeTheRun() {
        #expect(ResultWriter.canAppend(to: "/nonexistent/folder/runs.csv") == false)
        #expect(ResultWriter.canAppend(to: NSTemporaryDirectory() + "socket-bench-\(getpid()).csv"))
    }

    @Test func idleMeasuresOneHeartbeatPeriodUnlessToldOtherwise() throws {
        #expect(try ClientOptions.parse(["idle", "-H", "5"]).duration == 5)
        #expect(try ClientOptions.parse(["idle", "-H", "5", "-d", "12"]).duration == 12)
    }

    @Test func rejectsAnUnknownModeAndBadValues() {
        #expect(throws: ArgumentError.self) { try ClientOptions.parse([]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["udp"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "--port", "0"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "-c", "0"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "-s", "16777217"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "-d", "0"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "-w", "-1"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "--label"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parse(["bulk", "--fast"]) }
    }
}
