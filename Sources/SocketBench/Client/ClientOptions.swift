import AsyncSocket

/// What `socket-bench client` runs: a mode and its knobs, with each mode's defaults filled in (those of
/// `shared/bench/loadgen.c`, except the idle heartbeat period, 30 s here).
struct ClientOptions: Equatable, Sendable {
    /// The load a run puts on the server.
    enum Mode: String, Sendable, CaseIterable {
        /// One frame in flight per connection; messages/s and latency.
        case pingpong
        /// ``ClientOptions/depth`` frames in flight per connection; messages/s and latency.
        case pipeline
        /// Big frames streamed with a deep window; MB/s echoed.
        case bulk
        /// Many connections sending a heartbeat every ``ClientOptions/heartbeat`` seconds; how many stay alive.
        case idle
    }

    var mode: Mode
    /// The server's address: a numeric IPv4 or IPv6 address, or a name.
    var host = "127.0.0.1"
    /// The server's port; socket-bench's server listens on 9100 by default.
    var port: UInt16 = 9100
    /// Connections opened (pingpong 1, pipeline 100, bulk 1, idle 10,000).
    var connections: Int
    /// Payload bytes per frame, the 4-byte length not counted (64; bulk 65,536; idle 16).
    var size: Int
    /// Frames in flight per connection (pipeline 16, bulk 32; always 1 for pingpong and idle).
    var depth: Int
    /// Seconds measured (10; idle: one heartbeat period, so every connection sends one heartbeat).
    var duration: Double
    /// Seconds of traffic before measuring starts, not counted in any figure (2; idle 0).
    var warmup: Double
    /// Seconds between an idle connection's heartbeats (30).
    var heartbeat: Double = 30
    /// Idle: the heartbeat clock ticks at most once per this many seconds and sends every heartbeat due
    /// by then together (0: each at its own time, one tick per heartbeat). Each connection still beats
    /// once per ``heartbeat``; a beat leaves up to a tick late. Fewer ticks wake both sides less often:
    /// at 1,000,000 connections the wake-ups, not the bytes, are the cost.
    var tick: Double = 0
    /// Idle: after connecting, wait until this file exists before the heartbeats start (so many
    /// client processes start together), or nil to start at once.
    var goFile: String?
    /// Event-loop threads the connections are spread over (1).
    var loops = 1
    /// File the run appends a CSV row to, or nil.
    var csvPath: String?
    /// Copied to the RESULT line (`-` when empty).
    var label = ""
    /// Server process whose resident memory (`VmRSS`, KiB) is reported at the end, or nil.
    var serverPID: Int32?
    /// `--tls`: every connection secured before it sends (TLS 1.3 unless ``tlsVersion`` says 1.2).
    var tls = false
    /// `--ca FILE`: verify the server against this CA and ``host``; without it the client does not
    /// verify (a benchmark of the crypto, not of trust).
    var caFile: String?
    /// `--cipher NAME`: the one cipher suite offered (OpenSSL's name), or nil for OpenSSL's defaults.
    var cipher: String?
    /// `--tls-version 1.2|1.3`: the highest version offered.
    var tlsVersion: TLSConfiguration.Version?
    /// A WebSocket run (`socket-bench client websocket`): LP4's frames become WebSocket messages; nil for LP4.
    var webSocket: WebSocketSettings?

    /// The client's TLS settings, or nil without `--tls`.
    var tlsSettings: TLSConfiguration? {
        guard tls else { return nil }
        var settings = TLSConfiguration.client(peerName: host)
        if let caFile {
            settings.trustRoots = .files([caFile])
        } else {
            settings.certificateVerification = .unsafeNoVerification
        }
        if let cipher { settings.cipherSuites = [cipher] }
        settings.maximumVersion = tlsVersion
        return settings
    }

    /// `mode` with its defaults.
    init(mode: Mode) {
        self.mode = mode
        connections = mode == .pipeline ? 100 : mode == .idle ? 10_000 : 1
        size = mode == .bulk ? 65_536 : mode == .idle ? 16 : 64
        depth = mode == .pipeline ? 16 : mode == .bulk ? 32 : 1
        duration = mode == .idle ? heartbeat : 10
        warmup = mode == .idle ? 0 : 2
    }

    /// Bytes per frame on the wire: 4 + ``size``.
    var frameSize: Int { 4 + size }

    static let usage = """
        usage: socket-bench client pingpong|pipeline|bulk|idle [options]   (the chat load: socket-bench client chat --help)
          --host H               server address (default 127.0.0.1)
          --port P               server port (default 9100)
          -c, --connections N    connections (pingpong 1, pipeline 100, bulk 1, idle 10000)
          -s, --size BYTES       payload bytes per frame (default 64; bulk 65536; idle 16)
          -D, --depth N          frames in flight per connection (pipeline 16, bulk 32; pingpong and idle: always 1)
          -d, --duration SEC     seconds measured (default 10; idle: one heartbeat period)
          -w, --warmup SEC       seconds before measuring, not counted (default 2; idle 0)
          -H, --heartbeat SEC    idle: seconds between a connection's heartbeats (default 30)
          --tick SEC             idle: send the heartbeats due in batches, at most one per SEC (default 0: each on time)
          --go-file PATH         idle: after connecting, start the heartbeats once PATH exists
          --loops N              event-loop threads (default 1)
          --csv FILE             append a CSV row (header first when the file is new)
          --label L              label for the RESULT line and the CSV row
          --server-pid PID       report that process's resident memory (VmRSS) at the end
          --tls                  TLS (OpenSSL 3) on every connection, handshake before sending
          --ca FILE              with --tls: verify the server against this CA (default: no verification)
          --cipher NAME          with --tls: offer only this suite (TLS_AES_128_GCM_SHA256, ECDHE-ECDSA-AES128-GCM-SHA256)
          --tls-version 1.2|1.3  with --tls: the highest version offered (default 1.3)
        Idle connections bind source addresses 127.0.0.2-127.0.0.250 (so more connections fit than one
        address's ephemeral ports); one process holds at most about 19,000 of them (open-file hard limit
        20,000 here): run several clients for more.
        Prints a table on standard error and one RESULT line on standard output; exits 1 when any echo
        mismatched, any connection failed, or (idle) any connection missed a heartbeat echo.
        """

    /// Parses the arguments after `client`.
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> ClientOptions {
        var scanner = ArgumentScanner(arguments)
        guard let modeName = scanner.next(), let mode = Mode(rawValue: modeName) else {
            throw ArgumentError("the first argument must be a mode: pingpong, pipeline, bulk or idle")
        }
        var options = ClientOptions(mode: mode)
        var duration: Double?
        while let argument = scanner.next() {
            switch argument {
            case "--host": options.host = try scanner.value(for: argument)
            case "--port": options.port = try scanner.number(for: argument, in: 1...65_535)
            case "-c", "--connections": options.connections = try scanner.number(for: argument, in: 1...1_000_000)
            case "-s", "--size": options.size = try scanner.number(for: argument, in: 0...(16 << 20))
            case "-D", "--depth": options.depth = try scanner.number(for: argument, in: 1...65_536)
            case "-d", "--duration": duration = try scanner.decimal(for: argument, in: 0.001...1_000_000)
            case "-w", "--warmup": options.warmup = try scanner.decimal(for: argument, in: 0...1_000_000)
            case "-H", "--heartbeat": options.heartbeat = try scanner.decimal(for: argument, in: 0.001...1_000_000)
            case "--tick": options.tick = try scanner.decimal(for: argument, in: 0...3_600)
            case "--go-file": options.goFile = try scanner.value(for: argument)
            case "--loops": options.loops = try scanner.number(for: argument, in: 1...256)
            case "--csv": options.csvPath = try scanner.value(for: argument)
            case "--label": options.label = try scanner.value(for: argument)
            case "--server-pid": options.serverPID = try scanner.number(for: argument, in: 1...Int(Int32.max))
            case "--tls": options.tls = true
            case "--ca": options.caFile = try scanner.value(for: argument)
            case "--cipher": options.cipher = try scanner.value(for: argument)
            case "--tls-version":
                switch try scanner.value(for: argument) {
                case "1.2": options.tlsVersion = .tls12
                case "1.3": options.tlsVersion = .tls13
                default: throw ArgumentError("--tls-version is 1.2 or 1.3")
                }
            default: throw ArgumentError("unknown argument \(argument)")
            }
        }
        if mode == .pingpong || mode == .idle {
            guard options.depth == 1 else { throw ArgumentError("\(mode.rawValue) keeps one frame in flight; -D is for pipeline and bulk") }
        }
        options.duration = duration ?? (mode == .idle ? options.heartbeat : 10)
        if !options.tls, options.caFile != nil || options.cipher != nil || options.tlsVersion != nil {
            throw ArgumentError("--ca, --cipher and --tls-version go with --tls")
        }
        return options
    }
}
