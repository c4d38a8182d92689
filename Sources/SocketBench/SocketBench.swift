import Foundation

/// socket-bench's logic (the executable only forwards its arguments here): LP4, raw, UDP and WebSocket echo servers on
/// our own stack, and load-generating clients (ping-pong, pipeline, bulk, idle) that verify every echoed byte.
/// docs/BENCHMARKS.md has the commands and the figures.
///
/// LP4 is the echo protocol of `shared/bench/README.md`: each frame is a 4-byte big-endian unsigned length N,
/// then N bytes; the server echoes every frame unchanged and closes a connection whose frame is over 16 MiB.
public enum SocketBench {
    /// The usage text printed for `--help` and for bad arguments.
    public static let usage = """
        usage: socket-bench server lp4|lp4-per-frame|raw|discard [--host H] [--port P] [--loops N] [--reuse-port] [--workers N]
               socket-bench server udp [--host H] [--port P]
               socket-bench server websocket [--port P] [--deflate] [--path PATH]   (socket-bench server websocket --help)
               socket-bench client pingpong|pipeline|bulk|idle [options]   (socket-bench client --help)
               socket-bench client websocket [echo|bulk|idle] [options]   (socket-bench client websocket --help)
               socket-bench client chat [--mode load|crowd|throughput|latency] [options]   (socket-bench client chat --help)
               socket-bench store-size FILE
        """

    /// The chat commands, which live in the `ChatBench` module (it depends on this one, so the
    /// executable passes them in): `client chat ARGS` and `store-size ARGS`, each given the arguments after
    /// its command words and returning the exit status.
    public struct ChatCommands: Sendable {
        /// `socket-bench client chat …`.
        public var client: @Sendable ([String]) -> Int32
        /// `socket-bench store-size …`.
        public var storeSize: @Sendable ([String]) -> Int32

        /// The two commands.
        public init(client: @escaping @Sendable ([String]) -> Int32, storeSize: @escaping @Sendable ([String]) -> Int32) {
            self.client = client
            self.storeSize = storeSize
        }
    }

    /// Runs socket-bench with `arguments` (without the program name) and returns the process exit status:
    /// 0 after a clean run, 1 when a run failed (errors or mismatched echoes), 64 for bad arguments.
    /// Server modes run until the process is killed. `chat` runs the chat commands (nil: none).
    public static func main(arguments: [String], chat: ChatCommands? = nil) -> Int32 {
        switch arguments.first {
        case "server": return ServerCommand.run(arguments: Array(arguments.dropFirst()))
        case "client" where arguments.dropFirst().first == "chat" && chat != nil:
            return chat?.client(Array(arguments.dropFirst(2))) ?? 64
        case "client": return ClientCommand.run(arguments: Array(arguments.dropFirst()))
        case "store-size" where chat != nil: return chat?.storeSize(Array(arguments.dropFirst())) ?? 64
        case "--help", "-h":
            Output.say(usage)
            return 0
        case nil:
            Output.complain("a command is needed\n" + usage)
            return 64
        default:
            Output.complain("unknown command \(arguments[0])\n" + usage)
            return 64
        }
    }
}
