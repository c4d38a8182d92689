import Foundation
import Testing
@testable import SocketBench
import TestSupport

/// ``TestTiming/slowdown``, for the runs' durations and heartbeats.
private let slowdown = Double(TestTiming.slowdown)

/// The idle runs' heartbeat period and duration, seconds: each connection beats once.
private let idleSeconds = 1.0

/// A fraction of a second of each client mode against an in-process LP4 echo server: that every run is
/// clean, not how fast it is. The idle runs beat once a second for a second: an echo may take up to a
/// period, and a period of 0.1 s was a latency bound, not a behaviour (missed beside a loaded full run:
/// "hb_missed=5", each connection's heartbeat sent by a late tick unanswered 0.1 s later). Under
/// ThreadSanitizer (5–15 times slower) the runs and the heartbeat are `slowdown` times as long.
@Suite struct BenchClientSmokeTests {
    @Test func everyModeRunsCleanAgainstTheEchoServer() async throws {
        let server = EchoServer(mode: .lp4, loops: 1)
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }

        var runs: [ClientOptions] = []
        for mode in ClientOptions.Mode.allCases {
            var options = ClientOptions(mode: mode)
            options.port = port
            options.duration = (mode == .idle ? idleSeconds : 0.3) * slowdown
            options.warmup = mode == .idle ? 0 : 0.1
            switch mode {
            case .pingpong, .bulk: break
            case .pipeline: options.connections = 10
            case .idle:
                options.connections = 5
                options.heartbeat = idleSeconds * slowdown
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
                // Each connection's one beat falls due within the first 0.72 s; whether a tick late
                // by more than the rest of the run still sends it is the machine's load, not a behaviour.
                #expect(result.heartbeatsSent > 0)
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
                mode.rawValue, "--port", "\(port)", "-d", "\((mode == .idle ? idleSeconds : 0.3) * slowdown)", "--tls", "--ca",
                files.caCertificate,
                "--cipher", "TLS_AES_128_GCM_SHA256"
            ]
            arguments += mode == .idle ? ["-c", "5", "-H", "\(idleSeconds * slowdown)"] : ["-w", "0.1"]
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
