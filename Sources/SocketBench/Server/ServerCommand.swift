import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `socket-bench server lp4|lp4-per-frame|raw|discard [--host H] [--port P] [--loops N] [--reuse-port] [--workers N]`: runs an
/// ``EchoServer`` until the process is killed, after one line on standard output with the port:
/// `socket-bench lp4 echo listening on 127.0.0.1:7000 (pid 123, 1 loop)`.
///
/// `--workers N` starts N worker processes of this same command, each listening on the port with
/// `SO_REUSEPORT` (so the kernel spreads connections over them), and waits for them: a way past the
/// per-process open-file limit. SIGTERM or SIGINT to the parent stops the workers too.
///
/// `socket-bench server udp …` is the UDP echo instead (``UDPServerCommand``), `socket-bench server
/// websocket …` the WebSocket echo (``WebSocketServerCommand``).
enum ServerCommand {
    struct Options: Equatable {
        var mode = EchoServer.Mode.lp4
        var host = "127.0.0.1"
        /// The LP4 bench's customary port (`shared/bench/run-peers.sh` uses 9101 and up).
        var port: UInt16 = 9100
        var loops = 1
        var reusePort = false
        var workers = 0
        /// `--tls-cert` and `--tls-key`: PEM files of the certificate chain and its key.
        var tlsCertificate: String?
        var tlsKey: String?
        /// Set in workers that `--workers` started: the parent's process ID, whose end ends the worker.
        var parent: Int32?
    }

    static let usage = """
        usage: socket-bench server lp4|lp4-per-frame|raw|discard [--host H] [--port P] [--loops N] [--reuse-port] [--workers N]
               socket-bench server udp [--host H] [--port P]   (socket-bench server udp --help)
               socket-bench server websocket [--port P] [--deflate] [--path PATH]   (socket-bench server websocket --help)
          lp4              LP4 echo (4-byte big-endian length + bytes); each read's run of whole frames in one write
          lp4-per-frame    LP4 echo, one callback and one write per frame
          raw              every byte echoed as it arrives
          discard          nothing echoed: every byte read is dropped (RFC 863), for one-direction throughput
          --host H         address or interface to listen on (default 127.0.0.1)
          --port P         port (default 9100; 0 = any free port, printed)
          --loops N        event-loop threads (default 1)
          --reuse-port     SO_REUSEPORT: other processes of this user may listen on the same port
          --workers N      N worker processes sharing the port (SO_REUSEPORT); SIGTERM/SIGINT stops them all
          --tls-cert FILE  TLS (OpenSSL 3) on every connection with this PEM certificate chain ...
          --tls-key FILE   ... and this PEM private key (both or neither)
        """

    /// Parses the arguments after `server`.
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(arguments)
        guard let modeName = scanner.next(), let mode = EchoServer.Mode(rawValue: modeName) else {
            throw ArgumentError("the first argument must be a mode: lp4, lp4-per-frame, raw, discard (or udp)")
        }
        options.mode = mode
        while let argument = scanner.next() {
            switch argument {
            case "--host": options.host = try scanner.value(for: argument)
            case "--port": options.port = try scanner.number(for: argument, in: 0...65_535)
            case "--loops": options.loops = try scanner.number(for: argument, in: 1...256)
            case "--workers": options.workers = try scanner.number(for: argument, in: 1...256)
            case "--reuse-port": options.reusePort = true
            case "--tls-cert": options.tlsCertificate = try scanner.value(for: argument)
            case "--tls-key": options.tlsKey = try scanner.value(for: argument)
            case "--parent": options.parent = try scanner.number(for: argument, in: 1...Int(Int32.max))
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        guard (options.tlsCertificate == nil) == (options.tlsKey == nil) else {
            throw ArgumentError("--tls-cert and --tls-key go together")
        }
        return options
    }

    /// The server's TLS settings from `--tls-cert` and `--tls-key`, or nil.
    static func tlsSettings(_ options: Options) -> TLSConfiguration? {
        guard let certificate = options.tlsCertificate, let key = options.tlsKey else { return nil }
        return .server(certificateChain: .file(certificate), privateKey: .file(key))
    }

    static func run(arguments: [String]) -> Int32 {
        if arguments.first == "udp" { return UDPServerCommand.run(arguments: Array(arguments.dropFirst())) }
        if arguments.first == "websocket" { return WebSocketServerCommand.run(arguments: Array(arguments.dropFirst())) }
        let options: Options
        switch ParsedArguments.parse(arguments, usage: usage, parse) {
        case .run(let parsed): options = parsed
        case .exit(let status): return status
        }
        ResourceLimits.raiseOpenFileLimit()
        if options.workers > 0 {
            let workerArguments =
                ["server"] + arguments.filter { $0 != "--reuse-port" }.removingOption("--workers")
                + ["--reuse-port"]
            return WorkerProcesses.run(count: options.workers, arguments: workerArguments)
        }
        if let parent = options.parent { WorkerProcesses.exitWhenOrphaned(parent: parent) }
        let server = EchoServer(mode: options.mode, loops: options.loops, tls: tlsSettings(options))
        let port: UInt16
        do {
            port = try server.start(host: options.host, port: options.port, reusePort: options.reusePort)
        } catch {
            Output.complain("cannot listen on \(options.host):\(options.port): \(error)")
            return 1
        }
        let loops = options.loops == 1 ? "1 loop" : "\(options.loops) loops"
        let tls = options.tlsCertificate == nil ? "" : " over TLS"
        Output.say(
            "socket-bench \(options.mode.rawValue)\(options.mode == .discard ? "" : " echo")\(tls) listening on \(options.host):\(port) (pid \(getpid()), \(loops))"
        )
        while true { pause() }
    }
}

extension [String] {
    /// The arguments without `name` and the value after it.
    func removingOption(_ name: String) -> [String] {
        guard let index = firstIndex(of: name) else { return self }
        return Array(self[..<index]) + Array(self[Swift.min(index + 2, count)...])
    }
}
