import SocketBench

/// What `socket-bench client chat --mode latency` runs (``usage``).
public struct LatencyOptions: Equatable, Sendable {
    /// The server's address. Default 127.0.0.1:7777 (`im-server`'s).
    public var server = ServerAddress.defaultServer
    /// Messages per second, sent on a fixed schedule (message i at i / rate seconds). Default 1,000.
    public var rate = 1_000.0
    /// Seconds of sending. Default 10 s.
    public var seconds = 10.0
    /// Messages kept sent and not yet acknowledged; a message due while the window is full waits.
    /// Default 256.
    public var window = 256
    /// Bytes of text per message (its id, a space, `x`s). Default 32.
    public var textBytes = 32
    /// How long after the last send the run waits for the last acknowledgements and deliveries (and
    /// how long it may go without progress). Default 10 s.
    public var drain: Duration = .seconds(10)
    /// The server's process, whose CPU time is reported per message; nil: not reported.
    public var serverPID: Int32?
    /// Copied to the RESULT line (`-` when empty).
    public var label = ""

    /// The defaults.
    public init() {}

    /// Messages the run sends: rate × seconds, at least 1.
    public var total: Int { max(1, Int((rate * seconds).rounded())) }

    static let usage = """
        usage: socket-bench client chat --mode latency [--server H:P] [--rate R] [--duration T] [--window W]
                                  [--text-bytes B] [--drain SEC] [--server-pid PID] [--label L] [--json]
          --server H:P         the chat server (default 127.0.0.1:7777)
          --rate R             messages per second from one sender to one receiver (default 1000)
          --duration T         seconds of sending (default 10)
          --window W           messages kept unacknowledged at most (default 256)
          --text-bytes B       bytes of text per message (default 32)
          --drain SEC          wait this long after the last send for what is outstanding (default 10)
          --server-pid PID     report the server's CPU time per message (from /proc/PID/stat)
        Both users log in with protocol version 2 and a password (new names each run). Message i is sent at
        i/R s; per message, the time from writing it to the receiver reading its delivery, and to the
        sender reading its `stored`: p50, p90, p99, max. Every message must be stored once and delivered
        once (lost 0, duplicates 0). Summary on standard error, one RESULT line on standard output; exits 1
        unless clean.
        """

    /// Parses the arguments after `--mode latency` (``ChatBench`` takes out `--mode` and `--json`).
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    public static func parse(_ arguments: [String]) throws(ArgumentError) -> LatencyOptions {
        var options = LatencyOptions()
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--server": options.server = try ServerAddress.parse(try scanner.value(for: argument))
            case "--rate": options.rate = try scanner.decimal(for: argument, in: 0.1...1_000_000)
            case "--duration": options.seconds = try scanner.decimal(for: argument, in: 0.001...86_400)
            case "--window": options.window = try scanner.number(for: argument, in: 1...1_000_000)
            case "--text-bytes": options.textBytes = try scanner.number(for: argument, in: 1...60_000)
            case "--drain": options.drain = .milliseconds(Int64(try scanner.decimal(for: argument, in: 0.1...86_400) * 1000))
            case "--server-pid": options.serverPID = try scanner.number(for: argument, in: 1...Int(Int32.max))
            case "--label": options.label = try scanner.value(for: argument)
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        guard options.total <= 100_000_000 else { throw ArgumentError("--rate × --duration is over 100,000,000 messages") }
        return options
    }
}
