import SocketFraming

extension ClientOptions {
    /// What a WebSocket run (`socket-bench client websocket …`) adds to the LP4 client's options.
    struct WebSocketSettings: Equatable, Sendable {
        /// The request target of the upgrade: path and query (`/`).
        var path = "/"
        /// Text messages (ASCII payloads) instead of binary ones.
        var text = false
        /// Offer permessage-deflate (RFC 7692, `permessage-deflate; client_max_window_bits`). The
        /// heartbeats of idle runs are Pings, never compressed; with ``corpus`` the messages are compressed
        /// when the server accepts.
        var deflate = false
        /// `--corpus chat`: text messages from a corpus of chat-like JSON (``WebSocketCorpus``) instead of
        /// the pattern's payloads, compressed when permessage-deflate was agreed.
        var corpus = false
    }

    /// The port `socket-bench server websocket` listens on by default: 9200.
    static let webSocketDefaultPort: UInt16 = 9200

    static let webSocketUsage = """
        usage: socket-bench client websocket [echo|pingpong|bulk|idle] [--url ws://H:P/PATH] [options]
          A load for any WebSocket (RFC 6455) echo server; every echoed byte is checked.
          echo (default)         N connections x K messages in flight of S bytes: messages/s, p50/p99 round trip
                                 (-c 100, -D 16, -s 64)
          pingpong               one connection, one message in flight (-s 64)
          bulk                   throughput of big messages: one connection, 4 in flight of 1 MiB (-s 1048576 -D 4)
          idle                   holds N connections (-c 10000), each sending a Ping of 16 bytes every -H seconds
                                 and checking its Pong; with --server-pid, the server's RSS per connection
          --url ws://H:P/PATH    the server (default ws://127.0.0.1:9200/); wss:// is --tls
          --text                 text messages (printable ASCII) instead of binary
          --corpus chat          echo/pingpong: text messages from 256 chat-like JSON messages of 115-171 bytes
                                 (framing-bench's permessage-deflate stream) instead of -s bytes; reports the
                                 payload bytes per message byte each way (sent_ratio, echo_ratio)
          --deflate              offer permessage-deflate (client_max_window_bits, zlib's defaults otherwise); with
                                 --corpus chat, messages are compressed when the server accepts (context takeover as
                                 agreed) and compressed echoes inflated; idle: only the handshake (heartbeats are
                                 Pings); deflate_accepted counts the connections that got it
        and the LP4 client's options (socket-bench client --help): -c, -s, -D, -d, -w, -H, --loops, --csv,
        --label, --server-pid, --tls, --ca, --cipher, --tls-version, --host, --port.
        Messages are one frame each (FIN set, masked with a per-slot key); the server may fragment its echoes.
        Prints a summary on standard error and one RESULT line on standard output (proto=ws, server_rss_per_conn_b
        in idle runs with --server-pid); exits 1 on any error or mismatch.
        """

    /// Parses the arguments after `client websocket`.
    /// - Throws: ``ArgumentError`` naming the first argument that does not fit.
    static func parseWebSocket(_ arguments: [String]) throws(ArgumentError) -> ClientOptions {
        var rest = arguments
        var modeName = "pipeline"
        if let first = rest.first, !first.hasPrefix("-") {
            rest.removeFirst()
            guard ["echo", "pipeline", "pingpong", "bulk", "idle"].contains(first) else {
                throw ArgumentError("the WebSocket modes are echo, pingpong, bulk and idle, not \(first)")
            }
            modeName = first == "echo" ? "pipeline" : first
        }
        var settings = WebSocketSettings()
        var url: WebSocketURL?
        var lp4Arguments: [String] = []
        var scanner = ArgumentScanner(rest)
        while let argument = scanner.next() {
            switch argument {
            case "--text": settings.text = true
            case "--deflate": settings.deflate = true
            case "--corpus":
                let name = try scanner.value(for: argument)
                guard name == "chat" else { throw ArgumentError("--corpus knows chat, not \(name)") }
                settings.corpus = true
            case "--url":
                let text = try scanner.value(for: argument)
                do { url = try WebSocketURL(text) } catch { throw ArgumentError("--url needs a ws:// or wss:// URL, not \(text)") }
            default: lp4Arguments.append(argument)
            }
        }
        var options = try parse([modeName] + lp4Arguments)
        let given = Set(lp4Arguments)
        if given.isDisjoint(with: ["--port"]) { options.port = webSocketDefaultPort }
        if options.mode == .bulk {
            if given.isDisjoint(with: ["-s", "--size"]) { options.size = 1 << 20 }
            if given.isDisjoint(with: ["-D", "--depth"]) { options.depth = 4 }
        }
        if let url {
            options.host = url.host
            options.port = UInt16(clamping: url.port)
            settings.path = url.resourceName
            options.tls = options.tls || url.isSecure
        }
        if options.mode == .idle && options.size > 125 {
            throw ArgumentError("idle heartbeats are Pings: -s is at most 125 bytes (RFC 6455 §5.5)")
        }
        if options.mode != .idle && settings.deflate && !settings.corpus {
            throw ArgumentError("--deflate goes with idle or --corpus chat (the messages this client compresses)")
        }
        if settings.corpus && (options.mode == .idle || options.mode == .bulk) {
            throw ArgumentError("--corpus goes with echo and pingpong")
        }
        options.webSocket = settings
        return options
    }

    /// The URL a WebSocket run connects to, for its upgrade request.
    var webSocketURL: WebSocketURL? {
        guard let webSocket else { return nil }
        let host = host.contains(":") ? "[\(host)]" : host
        return try? WebSocketURL("\(tls ? "wss" : "ws")://\(host):\(port)\(webSocket.path)")
    }
}
