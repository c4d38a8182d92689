import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `socket-bench server websocket [--host H] [--port P] [--deflate] [--path /] [--loops N]`: runs a
/// ``WebSocketEchoServer`` until the process is killed, after one line on standard output with the port:
/// `socket-bench websocket echo listening on ws://127.0.0.1:9200/ (pid 123, 1 loop, deflate off)`.
enum WebSocketServerCommand {
    struct Options: Equatable {
        var host = "127.0.0.1"
        /// The WebSocket bench's customary port (scripts/bench-websocket.sh uses 9200 and up).
        var port: UInt16 = 9200
        var deflate = false
        var path: String?
        var loops = 1
    }

    static let usage = """
        usage: socket-bench server websocket [--host H] [--port P] [--deflate] [--path PATH] [--loops N]
          A WebSocket (RFC 6455) echo server: upgrades on ws://H:P/ at any path, sends every message back
          with its type (text as text, binary as binary), answers pings, completes the closing handshake
          echoing the peer's close code. The library's default limits: 16 MiB a frame, 64 MiB a message,
          close timeout 10 s, keep-alive ping every 20 s (pong within 20 s), request head 8 KiB within 10 s.
          --host H      address to listen on (default 127.0.0.1)
          --port P      port (default 9200; 0 = any free port, printed)
          --deflate     negotiate permessage-deflate (RFC 7692) with clients that offer it, with the library's
                        defaults (server_no_context_takeover; client window at most 12 bits); without it the
                        extension is never accepted.
          --path PATH   upgrade only requests for PATH (query ignored); other paths get 404 Not Found
          --loops N     event-loop threads (default 1)
        """

    /// Parses the arguments after `server websocket`.
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--host": options.host = try scanner.value(for: argument)
            case "--port": options.port = try scanner.number(for: argument, in: 0...65_535)
            case "--deflate": options.deflate = true
            case "--loops": options.loops = try scanner.number(for: argument, in: 1...256)
            case "--path":
                let path = try scanner.value(for: argument)
                guard path.hasPrefix("/") else { throw ArgumentError("--path must start with /, not \(path)") }
                options.path = path
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        return options
    }

    /// Runs the server with the arguments after `server websocket`; returns only on an error (64: bad
    /// arguments, 1: cannot listen).
    static func run(arguments: [String]) -> Int32 {
        let options: Options
        switch ParsedArguments.parse(arguments, usage: usage, parse) {
        case .run(let parsed): options = parsed
        case .exit(let status): return status
        }
        signal(SIGPIPE, SIG_IGN)
        ResourceLimits.raiseOpenFileLimit()
        let server = WebSocketEchoServer(path: options.path, deflate: options.deflate, loops: options.loops)
        let port: UInt16
        do {
            port = try server.start(host: options.host, port: options.port)
        } catch {
            Output.complain("cannot listen on \(options.host):\(options.port): \(error)")
            return 1
        }
        let loops = options.loops == 1 ? "1 loop" : "\(options.loops) loops"
        let deflate = options.deflate ? "deflate on" : "deflate off"
        Output.say(
            "socket-bench websocket echo listening on ws://\(options.host):\(port)\(options.path ?? "/") (pid \(getpid()), \(loops), \(deflate))"
        )
        while true { pause() }
    }
}
