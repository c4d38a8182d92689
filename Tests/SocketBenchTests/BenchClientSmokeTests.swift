import Foundation
import Testing
@testable import SocketBench
import TestSupport

/// ``TestTiming/slowdown``, for the runs' durations and heartbeats.
private let slowdown = Double(TestTiming.slowdown)

/// A fraction of a second of each client mode against an in-process LP4 echo server: that every run is
/// clean, not how fast it is. Under ThreadSanitizer (5–15 times slower) a heartbeat took longer than
/// the 0.1 s the idle runs give it ("hb_missed=2", 3 of 5 connections alive), so there the runs and
/// the heartbeat are `slowdown` times as long.
@Suite struct BenchClientSmokeTests {
    @Test func everyModeRunsCleanAgainstTheEchoServer() async throws {
        let server = EchoServer(mode: .lp4, loops: 1)
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }

        var runs: [ClientOptions] = []
        for mode in ClientOptions.Mode.allCases {
            var options = ClientOptions(mode: mode)
            options.port = port
            options.duration = 0.3 * slowdown
            options.warmup = mode == .idle ? 0 : 0.1
            switch mode {
            case .pingpong, .bulk: break
            case .pipeline: options.connections = 10
            case .idle:
                options.connections = 5
                options.heartbeat = 0.1 * slowdown
                options.serverPID = getpid()
            }
            runs.append(options)
        }
        for options in runs {
            let result = await BenchClient.run(options)
            let mode = options.mode.rawValue
            #expect(result.errors == 0, "\(mode): errors")
            #expect(result.mismatches == 0, "\(mode): mismatches")
            #expect(result.messages > 0, "\(mode): no messages")
            #expect(result.connected == options.connections, "\(mode): connected")
            #expect(result.alive == options.connections, "\(mode): alive")
            #expect(result.isClean, "\(ResultWriter.resultLine(result))")
            #expect(result.latencyMicroseconds(0.5) > 0)
            if options.mode == .idle {
                #expect(result.heartbeatsMissed == 0 && result.heartbeatsEchoed == result.heartbeatsSent)
                // Every connection beat at least once (due at 0.1 s of a 0.3 s run). How many more fit
                // depends on the machine's load: a count is a speed, not a behaviour (flaked at 7 of 10).
                #expect(result.heartbeatsSent >= options.connections)
                #expect(result.serverRSSKilobytes.map { $0 > 0 } == true)
            }
        }
    }
}

@Suite struct BenchClientFailureTests {
    /// Regression: with every connect refused, the client still waited out warm-up and duration.
    @Test func aRunWithNoConnectionEndsAtOnceWithItsErrors() {
        let port = unusedLoopbackPort()
        var options = ClientOptions(mode: .pingpong)
        options.port = port
        options.connections = 2
        options.warmup = 30
        options.duration = 30
        let started = ContinuousClock.now
        let result = BenchClient.run(options) as BenchResult
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(result.connected == 0)
        #expect(result.errors == 2)
        #expect(result.isClean == false)
    }

    /// The TLS runs (`--tls-cert`/`--tls-key` on the server, `--tls --ca --cipher` on the client):
    /// every mode clean through TLS; the runs and the heartbeat stretched under ThreadSanitizer as
    /// above ("hb_missed=5" there).
    @Test func everyModeRunsCleanOverTLS() async throws {
        let files = try await TestCertificates.shared()
        let server = EchoServer(
            mode: .lp4, loops: 1, tls: .server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey)))
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }
        for mode in ClientOptions.Mode.allCases {
            var arguments = [
                mode.rawValue, "--port", "\(port)", "-d", "\(0.3 * slowdown)", "--tls", "--ca", files.caCertificate,
                "--cipher", "TLS_AES_128_GCM_SHA256"
            ]
            arguments += mode == .idle ? ["-c", "5", "-H", "\(0.1 * slowdown)"] : ["-w", "0.1"]
            if mode == .pipeline { arguments += ["-c", "10"] }
            let options = try ClientOptions.parse(arguments)
            let result = await BenchClient.run(options)
            #expect(result.isClean, "\(mode.rawValue): \(ResultWriter.resultLine(result))")
            #expect(result.connected == options.connections, "\(mode.rawValue): connected")
            #expect(result.messages > 0, "\(mode.rawValue): no messages")
        }
        #expect(throws: ArgumentError("--ca, --cipher and --tls-version go with --tls")) { try ClientOptions.parse(["bulk", "--ca", "x"]) }
    }
}
