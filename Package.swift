// swift-tools-version:6.0
//
// swift-async-socket: asynchronous TCP sockets in GCDAsyncSocket's words, framing against sticky packets,
// heartbeats and reconnects, and an instant-messaging server and client built on them.
import PackageDescription

let package = Package(
    name: "swift-async-socket",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SocketLog", targets: ["SocketLog"]),
        .library(name: "AsyncSocket", targets: ["AsyncSocket"]),
        .library(name: "SocketFraming", targets: ["SocketFraming"]),
        .library(name: "FramedSocket", targets: ["FramedSocket"]),
        .library(name: "LongLink", targets: ["LongLink"]),
        .library(name: "WebSocket", targets: ["WebSocket"]),
        .library(name: "ChatProtocol", targets: ["ChatProtocol"]),
        .library(name: "ChatServer", targets: ["ChatServer"]),
        .library(name: "Metrics", targets: ["Metrics"]),
        .library(name: "ChatWeb", targets: ["ChatWeb"]),
        .library(name: "ChatClient", targets: ["ChatClient"]),
        .library(name: "NATSClient", targets: ["NATSClient"]),
        .executable(name: "im-server", targets: ["im-server"]),
        .executable(name: "im-client", targets: ["im-client"]),
        .executable(name: "framing-bench", targets: ["framing-bench"]),
        .executable(name: "socket-bench", targets: ["socket-bench"])
    ],
    targets: [
        // C shims only where Swift cannot call the OS directly.
        .target(name: "CAsyncSocketShims"),
        // Debian's zlib (zlib1g-dev), installed by scripts/setup.sh.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Debian's SQLite 3 (libsqlite3-dev), for the chat's durable stores; installed by scripts/setup.sh.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Debian's libsodium (libsodium-dev), for Argon2id password hashes; installed by scripts/setup.sh.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // Logging shaped like swift-log's Logger/LogHandler (which cannot be fetched here); silent until bootstrapped.
        .target(name: "SocketLog"),
        // Debian's ICU (libicu-dev), for user names: UTS #39 confusable skeletons and spoof checks,
        // NFKC case folding; installed by scripts/setup.sh. Swift reaches it only through CICUShims
        // (Foundation's own copy of ICU's headers clashes with it in a Swift module).
        .systemLibrary(
            name: "CICU",
            pkgConfig: "icu-i18n",
            providers: [.apt(["libicu-dev"]), .brew(["icu4c"])]
        ),
        .target(name: "CICUShims", dependencies: ["CICU"]),
        // Debian's libedit (libedit-dev, BSD licence), the line editor of im-client's terminal;
        // installed by scripts/setup.sh. Its header wraps libedit's variadic calls, which Swift cannot make.
        .systemLibrary(
            name: "CEditLine",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"]), .brew(["libedit"])]
        ),
        // Debian's OpenSSL 3 (libssl-dev), TLS as a stage of a connection's byte path; installed by
        // scripts/setup.sh. Its header wraps the macros Swift cannot call.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // Debian's official NATS C client, libnats 3.4 (libnats-dev), for the chat's cluster mode;
        // installed by scripts/setup.sh. Its header wraps the macros Swift cannot call.
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"]), .brew(["cnats"])]
        ),
        // A small blocking Swift API over libnats: connections, subjects, JetStream streams, KV buckets.
        .target(name: "NATSClient", dependencies: ["CNATS"]),
        .target(name: "AsyncSocket", dependencies: ["CAsyncSocketShims", "COpenSSL"]),
        // Codecs are pure: no sockets.
        .target(name: "SocketFraming", dependencies: ["CZlib"]),
        // Codecs on sockets: typed frame reads for both APIs over the core's consuming read.
        .target(name: "FramedSocket", dependencies: ["AsyncSocket", "SocketFraming"]),
        // LongLink over TCP, or over a WebSocket (its frames as binary messages) through HTTP-only proxies.
        .target(
            name: "LongLink",
            dependencies: ["AsyncSocket", "SocketFraming", "FramedSocket", "WebSocket", "SocketLog", "CAsyncSocketShims"]),
        // WebSocket (RFC 6455, RFC 7692) over AsyncSocket: the close handshake and keep-alive as state
        // machines; the frame codec and the upgrade's parser are SocketFraming's (pure, fuzzed).
        .target(name: "WebSocket", dependencies: ["AsyncSocket", "SocketFraming", "SocketLog"]),
        // Counters, gauges and histograms updated by atomics, rendered in the Prometheus text format 0.0.4.
        .target(name: "Metrics"),
        // The chat's wire protocol: messages and codecs (versions 1 and 2), conversation ids, the form
        // of names, the discovery datagrams, the version. No C library, no socket.
        .target(name: "ChatProtocol", dependencies: ["LongLink", "AsyncSocket", "SocketFraming"]),
        // The SQLite wrapper both sides keep their files with (the server's store, the client's
        // delivery state and sent-message log), on Debian's SQLite; the stores' error type.
        .target(name: "ChatSQLite", dependencies: ["ChatProtocol", "CSQLite"]),
        // The chat server: sessions and routing, logins (Argon2id on libsodium, names on ICU), delivery,
        // presence, limits, the stores (in memory, SQLite, JetStream), the NATS cluster, discovery.
        .target(
            name: "ChatServer",
            dependencies: [
                "ChatProtocol", "ChatSQLite", "LongLink", "AsyncSocket", "SocketFraming", "SocketLog", "CSQLite", "CSodium",
                "CICUShims", "NATSClient", "Metrics"
            ]),
        // im-server's web port: one route table over WebSocket's listener (the web client's files from
        // Web/, /metrics, /healthz) and the chat over WebSocket at /chat.
        .target(
            name: "ChatWeb", dependencies: ["ChatServer", "WebSocket", "Metrics", "AsyncSocket", "SocketFraming"],
            resources: [.copy("Web")]),
        // The chat client: connection, outbox and positions on SQLite, commands, the lines it shows,
        // discovery of a server. No NATS, ICU or libsodium.
        .target(name: "ChatClient", dependencies: ["ChatProtocol", "ChatSQLite", "LongLink", "AsyncSocket", "SocketLog"]),
        // The command-line parser im-server and im-client share; each parses its own flags.
        .target(name: "ChatCommandLine", dependencies: ["ChatProtocol", "LongLink", "AsyncSocket"]),
        .executableTarget(
            name: "im-server",
            dependencies: [
                "ChatCommandLine", "ChatServer", "ChatWeb", "ChatSQLite", "ChatProtocol", "LongLink", "AsyncSocket", "SocketLog"
            ]),
        // im-client's terminal screen: the typed line kept at the bottom under a status line, output
        // above it, editing and history by libedit; the terminal put back on every way out.
        .target(name: "ChatTerminal", dependencies: ["CEditLine", "AsyncSocket"]),
        .executableTarget(
            name: "im-client",
            dependencies: ["ChatCommandLine", "ChatClient", "ChatProtocol", "ChatTerminal", "LongLink", "AsyncSocket", "SocketLog"]),
        // Decode throughput of the SocketFraming codecs (docs/BENCHMARKS.md); never run by `swift test`.
        .target(name: "FramingBenchmarks", dependencies: ["SocketFraming"]),
        .executableTarget(name: "framing-bench", dependencies: ["FramingBenchmarks"]),
        // LP4 / raw echo servers and load-generating clients on our stack (docs/BENCHMARKS.md).
        .target(name: "SocketBench", dependencies: ["AsyncSocket", "SocketFraming", "FramedSocket", "WebSocket", "FramingBenchmarks"]),
        .executableTarget(name: "socket-bench", dependencies: ["SocketBench", "ChatBench"]),
        // `socket-bench client chat`: load for the chat server (issues 11 §7, 12 §3, 14 §3; docs/BENCHMARKS.md):
        // users logging in, messages at given rates, every delivery verified; stored-and-acknowledged
        // throughput, delivery latency, store size. `swift test` runs only small in-process runs of it.
        .target(
            name: "ChatBench",
            dependencies: [
                "ChatProtocol", "LongLink", "AsyncSocket", "FramedSocket", "SocketFraming", "CSQLite", "SocketBench", "WebSocket"
            ]),

        .target(name: "TestSupport", dependencies: ["SocketFraming", "AsyncSocket", "SocketLog"], path: "Tests/TestSupport"),
        .testTarget(name: "SocketLogTests", dependencies: ["SocketLog", "TestSupport"]),
        .testTarget(name: "AsyncSocketTests", dependencies: ["AsyncSocket", "TestSupport"]),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"]),
        .testTarget(name: "SocketFramingTests", dependencies: ["SocketFraming", "TestSupport"]),
        // The WebSocket state machines as values (no socket), and later the module on loopback.
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "TestSupport"]),
        .testTarget(name: "FramedSocketTests", dependencies: ["FramedSocket", "TestSupport"]),
        .testTarget(name: "LongLinkTests", dependencies: ["LongLink", "WebSocket", "TestSupport"]),
        // The end-to-end tests run the executables, so they are built with the tests.
        .testTarget(name: "ChatProtocolTests", dependencies: ["ChatProtocol", "LongLink", "SocketFraming", "AsyncSocket", "TestSupport"]),
        // What the chat's test targets share: a server and its clients (ChatFixture), raw peers and the
        // presence fixture, im-server as a process, a fake version 2 server, temporary directories.
        .target(
            name: "ChatTestSupport",
            dependencies: ["ChatServer", "ChatClient", "ChatProtocol", "LongLink", "AsyncSocket", "TestSupport"],
            path: "Tests/ChatTestSupport"),
        // The chat server in process: sessions, names, stores, the cluster, the login queue, limits, presence.
        .testTarget(
            name: "ChatServerTests",
            dependencies: [
                "ChatServer", "ChatClient", "ChatSQLite", "ChatProtocol", "NATSClient", "ChatTestSupport", "TestSupport", "Metrics"
            ]),
        // The web port on loopback (/metrics, /healthz), the chat's metrics after a scripted chat, promtool.
        .testTarget(
            name: "ChatWebTests",
            dependencies: [
                "ChatWeb", "ChatServer", "Metrics", "ChatProtocol", "ChatTestSupport", "TestSupport", "AsyncSocket", "im-server"
            ]),
        // The chat client: the client and its presenter, the delivery-state store, the terminal client
        // (im-client on a pseudo-terminal, against a real im-server).
        .testTarget(
            name: "ChatClientTests",
            dependencies: [
                "ChatClient", "ChatServer", "ChatCommandLine", "ChatSQLite", "ChatProtocol", "ChatTestSupport", "TestSupport",
                "im-server", "im-client"
            ]),
        // Client and server together, end to end: the executables as processes (their command-line options,
        // pipes, the operator's log, discovery), the Python client, chaos, TLS, versioning, hardening.
        .testTarget(
            name: "ChatEndToEndTests",
            dependencies: [
                "ChatServer", "ChatClient", "ChatCommandLine", "ChatSQLite", "ChatProtocol", "NATSClient", "ChatTestSupport",
                "TestSupport", "im-server", "im-client"
            ]),
        // The terminal's layout arithmetic and the screen on a pseudo-terminal.
        .testTarget(name: "ChatTerminalTests", dependencies: ["ChatTerminal", "TestSupport", "AsyncSocket"]),
        // Real servers from Debian (redis-server, nginx, socat; scripts/setup.sh installs them).
        .testTarget(name: "InteropTests", dependencies: ["AsyncSocket", "TestSupport"]),
        // A few seconds of socket-bench: that it runs clean, not how fast.
        .testTarget(name: "SocketBenchTests", dependencies: ["SocketBench", "TestSupport", "socket-bench"]),
        // Short `socket-bench client chat` runs against an in-process chat server: counts, not speed.
        .testTarget(
            name: "ChatBenchTests", dependencies: ["ChatBench", "ChatServer", "ChatWeb", "ChatProtocol", "SocketBench", "TestSupport"]),
        // The NATS wrapper against a nats-server of its own (scripts/setup.sh installs it), killed and
        // restarted for the outage tests.
        .testTarget(name: "NATSClientTests", dependencies: ["NATSClient", "TestSupport"])
    ],
    swiftLanguageModes: [.v6]
)
