import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `socket-bench server udp [--host H] [--port P]`: runs a ``UDPEchoServer`` until the process is
/// killed, after one line on standard output with the port:
/// `socket-bench udp echo listening on 127.0.0.1:9200 (pid 123, 1 loop)`.
enum UDPServerCommand {
    struct Options: Equatable {
        var host = "127.0.0.1"
        /// `shared/bench/udp-loadgen.c`'s default port.
        var port: UInt16 = 9200
    }

    static let usage = """
        usage: socket-bench server udp [--host H] [--port P]
          udp              every datagram sent back to its sender (UDPSocket, one loop, recvmmsg/sendmmsg)
          --host H         address or interface to bind (default 127.0.0.1; ::1 for IPv6)
          --port P         port (default 9200; 0 = any free port, printed)
        """

    /// Parses the arguments after `server udp`.
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--host": options.host = try scanner.value(for: argument)
            case "--port": options.port = try scanner.number(for: argument, in: 0...65_535)
            default: throw ArgumentError("unknown argument \(argument) for the udp server")
            }
        }
        return options
    }

    /// Runs the server with the arguments after `server udp`; returns only on an error (64 for bad
    /// arguments, 1 when it cannot bind).
    static func run(arguments: [String]) -> Int32 {
        let options: Options
        switch ParsedArguments.parse(arguments, usage: usage, parse) {
        case .run(let parsed): options = parsed
        case .exit(let status): return status
        }
        let server = UDPEchoServer()
        let port: UInt16
        do {
            port = try server.start(host: options.host, port: options.port)
        } catch {
            Output.complain("cannot bind \(options.host):\(options.port): \(error)")
            return 1
        }
        Output.say("socket-bench udp echo listening on \(options.host):\(port) (pid \(getpid()), 1 loop)")
        while true { pause() }
    }
}
