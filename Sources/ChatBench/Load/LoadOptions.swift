import ChatProtocol
import SocketBench

/// What `socket-bench client chat` runs in its `load` and `crowd` modes (``usage``): users log in, then
/// send direct messages and broadcasts at given rates, every delivery checked off (``DeliveryLedger``).
public struct LoadOptions: Equatable, Sendable {
    /// Whether connections bind a source address of 127.0.0.0/8 before connecting.
    public enum SourceSpread: String, Equatable, Sendable {
        /// Spread when every server is an IPv4 loopback address and the connections outnumber one
        /// source address's ephemeral ports (Linux's `ip_local_port_range`) less 1,000.
        case auto
        /// Always (loopback IPv4 servers only): connection i binds 127.0.0.(2 + i mod 249).
        case on
        /// Never: the kernel picks the source address.
        case off
    }

    /// The chat servers; user i connects to `servers[i mod count]`. Default 127.0.0.1:7777.
    public var servers = [ServerAddress.defaultServer]
    /// Users logging in, each on a connection of its own. Default 100 (crowd: 2,000).
    public var users = 100
    /// Protocol version 1 or 2. Default 2.
    public var version = ChatProtocolVersion.v2
    /// Version 2 with passwords: stored sessions (numbered deliveries, `stored` with sequence numbers,
    /// `received`). Each user's first login costs the server an Argon2id hash. Default false: live.
    public var stored = false
    /// Stored sessions only (`--failover`): a user whose connection drops after its login logs in
    /// again, on another server of ``servers`` (the users of one server spread over all the others,
    /// each user's own server last: ``LoadRun/serverIndex(user:attempt:count:)``),
    /// at once, then after 2 s and 4 s, then doubling up to 30 s, each plus up to 1 s of jitter
    /// (``LoadRun/reconnectSchedule``); it sends its password, client instance, resume token and
    /// positions, then resends every message not yet answered with `stored` (docs/PROTOCOL.md). A
    /// delivery already read is dropped by its sequence number and counted as resent, as a client does.
    /// Default false: a drop is a connection failure.
    public var failover = false
    /// `--websocket`: every user connects to the servers' web port (`im-server --web-port`, given as
    /// `--server`) and upgrades to WebSocket at this request target (``defaultWebSocketPath``, `/chat`)
    /// before logging in, each frame then one binary message (docs/PROTOCOL.md "WebSocket"), as a
    /// browser's web client does; nil (the default): frames straight over TCP to the chat port.
    public var webSocketPath: String?
    /// The chat's request target on im-server's web port: `/chat`.
    public static let defaultWebSocketPath = "/chat"
    /// Bytes of text per message (its number, a space, `x`s). Default 32.
    public var textBytes = 32
    /// Source addresses. Default auto.
    public var sourceSpread = SourceSpread.auto
    /// Server processes whose resident memory (`VmRSS`) and CPU time are read (`/proc`); summed.
    public var serverPIDs: [Int32] = []
    /// Copied to the result (`-` when empty).
    public var label = ""
    /// `crowd` when made by the crowd mode's defaults, else `load`.
    public var modeName = "load"

    /// The rates: logins, direct messages, broadcasts, probes.
    public var rates = Rates()
    /// How long: the messages, between heartbeats, the logins' bound, the drain.
    public var timing = Timing()

    /// Per second: logins started, direct messages, broadcasts, probe messages.
    public struct Rates: Equatable, Sendable {
        /// Logins started per second; 0 = all at once. Default 0.
        public var loginRate = 0.0
        /// Direct messages per second across all users, each from a random user to another. Default 100
        /// (crowd: 0).
        public var directRate = 100.0
        /// Broadcasts per second across all users, each from a random user. Default 0.
        public var broadcastRate = 0.0
        /// Two more users, logged in before the others, exchanging direct messages at this many per second
        /// in all (alternately) until the end, their delays reported apart; 0 = no probes. Default 0
        /// (crowd: 20).
        public var probeRate = 0.0

        /// The defaults above.
        public init() {}
    }

    /// Seconds: the messages, between heartbeats, the logins' bound, the drain.
    public struct Timing: Equatable, Sendable {
        /// Seconds of messages once every user has logged in. Default 10 (crowd: 5).
        public var duration = 10.0
        /// Seconds between a connection's heartbeats (spread evenly over the connections); 0 = none. A
        /// connection that has sent none when the drain begins sends one then.
        /// Default 30.
        public var heartbeat = 30.0
        /// How long the logins may take in all, and (`--failover`) how long each login again may go
        /// unanswered once connected. Default 120 s.
        public var loginTimeout = 120.0
        /// How long after the last send the run waits for what is outstanding. Default 10 s.
        public var drain = 10.0

        /// The defaults above.
        public init() {}
    }
    /// The load mode's defaults.
    public init() {}

    /// The crowd mode's defaults: 2,000 users logging in at once while two probe users exchange 20
    /// direct messages a second; no other messages; 5 s after the logins.
    public static var crowd: LoadOptions {
        var options = LoadOptions()
        options.modeName = "crowd"
        options.users = 2_000
        options.rates.directRate = 0
        options.rates.probeRate = 20
        options.timing.duration = 5
        return options
    }

    /// The flags that take no value (``ChatBench`` passes the word after any other flag on as its value).
    static let flagsWithoutValue: Set<String> = ["--stored", "--failover", "--json", "--websocket"]

    /// Connections in all: the users and the two probes, if any.
    public var connections: Int { users + (rates.probeRate > 0 ? 2 : 0) }

    /// `v1`, `v2` (live) or `v2-stored`; `-ws` after it with ``webSocketPath`` (`v2-ws`, `v2-stored-ws`).
    public var protocolName: String {
        (version == .v1 ? "v1" : stored ? "v2-stored" : "v2") + (webSocketPath == nil ? "" : "-ws")
    }

    static let usage = """
        usage: socket-bench client chat [--mode load|crowd] [--server H:P]... [--users N] [--login-rate R]
                                        [--direct-rate R] [--broadcast-rate R] [--duration SEC] [options]
          --server H:P         a chat server; repeat for several (user i uses server i mod count) (default 127.0.0.1:7777)
          --users N            users, one connection each (default 100; crowd 2000)
          --login-rate R       logins started per second, 0 = all at once (default 0)
          --direct-rate R      direct messages per second across all users, random sender and recipient (default 100; crowd 0)
          --broadcast-rate R   broadcasts per second across all users, random sender (default 0)
          --duration SEC       seconds of messages after every user has logged in (default 10; crowd 5)
          --protocol 1|2       chat protocol version (default 2)
          --stored             version 2 with passwords: stored sessions, acknowledged (default: live)
          --websocket          connect over WebSocket: each --server is an im-server web port (--web-port), each
                               user upgrades at ws://H:P/chat and sends each frame as one binary message (default: TCP)
          --failover           with --stored: a user whose connection drops logs in again on another server (at once,
                               then 2, 4, 8… s up to 30 s, plus jitter) and resends what was not stored; deliveries
                               read before are dropped by sequence number (default: a drop fails the run)
          --heartbeat SEC      seconds between each connection's heartbeats, 0 = none (default 30)
          --probe-rate R       two extra users, logged in first, exchange R direct messages per second until the
                               end; their delays are reported apart (default 0 = none; crowd 20)
          --text-bytes B       bytes of text per message (default 32)
          --login-timeout SEC  time allowed for all logins, and for each --failover login again once connected (default 120)
          --drain SEC          wait at most this long after the last send for what is outstanding (default 10)
          --sources auto|on|off  bind source addresses 127.0.0.2-250 before connecting (default auto: when the
                               connections outnumber one address's ephemeral ports and every server is 127.x)
          --server-pid PID     a server process: its RSS (before and after the logins, at the end) and CPU time
                               per delivered message; repeat for several (summed)
          --label L            label for the result
          --json               one JSON object on standard output instead of the RESULT line
        Users are <tag>u1…<tag>uN (<tag> random per run). Messages start once every user has logged in (or the
        login timeout passed); message k of a kind is due k/R s after that. Every delivery is checked: each
        direct message reaches its recipient once, each broadcast every other user of the run once, in order
        per sender and conversation (missing, duplicates, out of order, misdelivered must be 0). Server errors
        (rateLimited too) are counted by code and fail the run; presence, presenceChanges and onlineUsers frames
        are skipped. Summary on standard error; exits 1 unless clean. `crowd` is `load` with the crowd defaults:
        the issue's "2,000 users logging in at once while two users exchange direct messages".
        """

    /// Parses the arguments after `--mode load|crowd`, starting from `defaults`
    /// (``ChatBench`` takes out `--mode` and `--json`).
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    public static func parse(_ arguments: [String], defaults: LoadOptions = LoadOptions()) throws(ArgumentError) -> LoadOptions {
        var options = defaults
        var servers: [ServerAddress] = []
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--server": servers.append(try ServerAddress.parse(try scanner.value(for: argument)))
            case "--users": options.users = try scanner.number(for: argument, in: 1...10_000_000)
            case "--login-rate": options.rates.loginRate = try scanner.decimal(for: argument, in: 0...10_000_000)
            case "--direct-rate": options.rates.directRate = try scanner.decimal(for: argument, in: 0...10_000_000)
            case "--broadcast-rate": options.rates.broadcastRate = try scanner.decimal(for: argument, in: 0...1_000_000)
            case "--duration": options.timing.duration = try scanner.decimal(for: argument, in: 0...86_400)
            case "--protocol":
                let value = try scanner.value(for: argument)
                guard let number = UInt16(value), let version = ChatProtocolVersion(rawValue: number) else {
                    throw ArgumentError("--protocol: 1 or 2, not \(value)")
                }
                options.version = version
            case "--stored": options.stored = true
            case "--failover": options.failover = true
            case "--websocket": options.webSocketPath = LoadOptions.defaultWebSocketPath
            case "--heartbeat": options.timing.heartbeat = try scanner.decimal(for: argument, in: 0...86_400)
            case "--probe-rate": options.rates.probeRate = try scanner.decimal(for: argument, in: 0...1_000_000)
            case "--text-bytes": options.textBytes = try scanner.number(for: argument, in: 1...10_000)
            case "--login-timeout": options.timing.loginTimeout = try scanner.decimal(for: argument, in: 0.1...86_400)
            case "--drain": options.timing.drain = try scanner.decimal(for: argument, in: 0...86_400)
            case "--sources":
                let value = try scanner.value(for: argument)
                guard let spread = SourceSpread(rawValue: value) else { throw ArgumentError("--sources: auto, on or off, not \(value)") }
                options.sourceSpread = spread
            case "--server-pid": options.serverPIDs.append(try scanner.number(for: argument, in: 1...Int(Int32.max)))
            case "--label": options.label = try scanner.value(for: argument)
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        if !servers.isEmpty { options.servers = servers }
        if options.failover, !options.stored { throw ArgumentError("--failover needs --stored (a live session keeps nothing to resume)") }
        if options.stored, options.version == .v1 { throw ArgumentError("--stored needs --protocol 2 (version 1 has no passwords)") }
        if options.webSocketPath != nil, options.version == .v1 {
            throw ArgumentError("--websocket needs --protocol 2 (the chat over WebSocket is version 2 only)")
        }
        if options.sourceSpread == .on, !options.servers.allSatisfy(\.isIPv4Loopback) {
            throw ArgumentError("--sources on needs 127.x.x.x servers")
        }
        return options
    }
}
