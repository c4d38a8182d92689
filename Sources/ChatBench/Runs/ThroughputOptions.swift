import SocketBench

/// What `socket-bench client chat --mode throughput` runs (``usage``).
public struct ThroughputOptions: Equatable, Sendable {
    /// Who receives the senders' messages.
    public enum Receivers: String, Equatable, Sendable {
        /// One receiver per sender: sender `s3` writes to `r3` (one conversation each).
        case perSender = "per-sender"
        /// One receiver for every sender (as many conversations as senders, one reader).
        case shared
    }

    /// The server's address. Default 127.0.0.1:7777 (`im-server`'s).
    public var server = ServerAddress.defaultServer
    /// Sender connections, each a user of its own. Default 4.
    public var senders = 4
    /// Numbered direct messages each sender sends. Default 10,000.
    public var messages = 10_000
    /// Messages a sender keeps sent and not yet acknowledged (`stored`). Default 256, the protocol's
    /// client bound.
    public var window = 256
    /// Bytes of text per message (its id, a space, `x`s). Default 32.
    public var textBytes = 32
    /// One receiver per sender (default) or one shared by all.
    public var receivers = Receivers.perSender
    /// How long the run may go without a single acknowledgement or delivery before it gives up.
    /// Default 30 s.
    public var stallTimeout: Duration = .seconds(30)
    /// The server's process, whose CPU time is reported per message; nil: not reported.
    public var serverPID: Int32?
    /// Copied to the RESULT line (`-` when empty).
    public var label = ""

    /// The defaults.
    public init() {}

    static let usage = """
        usage: socket-bench client chat --mode throughput [--server H:P] [--senders S] [--messages N] [--window W]
                                     [--receivers per-sender|shared] [--text-bytes B] [--stall-timeout SEC]
                                     [--server-pid PID] [--label L] [--json]
          --server H:P         the chat server (default 127.0.0.1:7777)
          --senders S          sender connections, users <tag>s1...<tag>sS (default 4)
          --messages N         numbered direct messages per sender (default 10000)
          --window W           messages a sender keeps unacknowledged (default 256)
          --receivers MODE     per-sender (default): <tag>r1...<tag>rS, one per sender; shared: one, <tag>r
          --text-bytes B       bytes of text per message (default 32)
          --stall-timeout SEC  give up after this long without progress (default 30)
          --server-pid PID     report the server's CPU time per message (from /proc/PID/stat)
        Every user logs in with protocol version 2 and a password (names are new each run: <tag> is random).
        Measures messages stored and acknowledged per second, from the first send to the last `stored`,
        and checks that every id was acknowledged exactly once and delivered exactly once, in order.
        Prints a summary on standard error and one RESULT line on standard output; exits 1 unless clean.
        """

    /// Parses the arguments after `--mode throughput` (``ChatBench`` takes out `--mode` and `--json`).
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    public static func parse(_ arguments: [String]) throws(ArgumentError) -> ThroughputOptions {
        var options = ThroughputOptions()
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--server": options.server = try ServerAddress.parse(try scanner.value(for: argument))
            case "--senders": options.senders = try scanner.number(for: argument, in: 1...10_000)
            case "--messages": options.messages = try scanner.number(for: argument, in: 1...100_000_000)
            case "--window": options.window = try scanner.number(for: argument, in: 1...1_000_000)
            case "--text-bytes": options.textBytes = try scanner.number(for: argument, in: 1...60_000)
            case "--receivers":
                let value = try scanner.value(for: argument)
                guard let receivers = Receivers(rawValue: value) else {
                    throw ArgumentError("--receivers: per-sender or shared, not \(value)")
                }
                options.receivers = receivers
            case "--stall-timeout": options.stallTimeout = .milliseconds(Int64(try scanner.decimal(for: argument, in: 0.1...86_400) * 1000))
            case "--server-pid": options.serverPID = try scanner.number(for: argument, in: 1...Int(Int32.max))
            case "--label": options.label = try scanner.value(for: argument)
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        return options
    }
}
