import AsyncSocket
import ChatCommandLine
import ChatProtocol
import ChatSQLite
import ChatServer
import ChatWeb
import Foundation
import LongLink
import SocketLog

/// `im-server [--host H] [--port P] [--idle-timeout SECONDS] [--name NAME] [--no-discovery]
/// [--discovery-group G] [--discovery-port P]`.
public struct ServerOptions: Equatable, Sendable {
    /// Interface to listen on. Default 127.0.0.1.
    public var host = "127.0.0.1"
    /// Port; 0 = any free port. Default ``defaultChatPort``.
    public var port = defaultChatPort
    /// Seconds of silence after which a client is dropped. Default 360 s (two 180 s heartbeats).
    public var idleTimeout: Duration = .seconds(360)
    /// How long logins and logouts are gathered before they are announced (`--presence-interval S`).
    /// Default ``ChatServer/defaultPresenceInterval`` (200 ms). Each tick in which something changed
    /// costs one frame per session, so a crowd of 100,000 wants seconds here.
    public var presenceInterval: Duration = ChatServer.defaultPresenceInterval
    /// LAN discovery: answered by default (group 239.255.77.77, UDP port 7777, name `chat`); `nil`
    /// after `--no-discovery`. `--name`, `--discovery-group` and `--discovery-port` change it.
    public var discovery: DiscoveryResponder.Configuration? = DiscoveryResponder.Configuration()
    /// Where messages, users, password hashes and read positions are kept (`--store FILE`): a SQLite
    /// file, created when missing. Default ``defaultStore``, in the current directory;
    /// ``memoryStore`` (`:memory:`) keeps them in memory only, lost when the server stops.
    public var store: String {
        get { storage.store }
        set { storage.store = newValue }
    }
    /// How hard the store file is synced (`--store-sync normal|full`). Default `.normal`: survives a
    /// crash or `kill -9` of the server; `.full` also survives a power loss (``SQLiteSynchronous``).
    public var storeSync: SQLiteSynchronous {
        get { storage.storeSync }
        set { storage.storeSync = newValue }
    }
    /// How long messages are kept (`--retain-messages N` per conversation, `--retain-days D`). Default:
    /// everything.
    public var retention: RetentionPolicy {
        get { storage.retention }
        set { storage.retention = newValue }
    }

    /// ``store``, ``storeSync``, ``retention``, kept together.
    var storage = Storage()

    /// The settings ``storage`` keeps (their defaults are the properties' above).
    struct Storage: Equatable, Sendable {
        var store = ServerOptions.defaultStore
        var storeSync: SQLiteSynchronous = SQLiteSynchronous.normal
        var retention: RetentionPolicy = RetentionPolicy.keepEverything
    }

    /// The least severe level written to the log (`--log-level LEVEL`: trace, debug, info, notice,
    /// warning, error, critical). Default `.info`: logins, logouts, drops, refusals and failures.
    public var logLevel = Logger.Level.info
    /// The limits on connections and what they send (`--max-connections N`, `--rate R`, `--burst N`,
    /// `--login-timeout S`, `--frame-timeout S`). Default ``ChatServer/Limits/init()``.
    public var limits = ChatServer.Limits()
    /// `--tls-cert FILE --tls-key FILE`: TLS for every connection with this certificate chain (PEM,
    /// leaf first) and private key (PEM, unencrypted); `nil` (the default): plaintext.
    public var tls: ServerTLSFiles?
    /// `--cluster nats://HOST:PORT` (repeatable: several NATS servers of one NATS cluster) and
    /// `--node-id ID`: run as a node of a chat on NATS JetStream (``ChatCluster``) instead of on
    /// ``store``; `nil` (the default): a server of its own. The node id defaults to `node-` and the
    /// process id.
    public var cluster: ChatCluster.Configuration?
    /// The Argon2id cost of new password hashes (`--password-cost interactive|moderate|minimum`).
    /// Default ``PasswordHasher/Limits/interactive`` (64 MiB, about 0.1 s of a core per login with a
    /// password). `minimum` (8 KiB, one pass: microseconds) is for tests and benchmarks that log in
    /// tens of thousands of users with passwords, never for real users: it makes a stolen hash cheap to
    /// guess. Hashes made with one cost keep verifying under another.
    public var passwordCost = PasswordHasher.Limits.interactive
    /// `--web-port P`: serve the web port (HTTP: the web client, `/chat`, `/metrics`, `/healthz`;
    /// docs/METRICS.md) on this TCP port (0: a free one, shown in the log); over TLS (HTTPS and WSS)
    /// with ``tls``, as the chat port; `nil` (the default): no web port.
    public var webPort: UInt16?
    /// `--web-host H`: the interface of the web port. Default 127.0.0.1.
    public var webHost = "127.0.0.1"
    /// `--web-root DIR`: serve the web client's files from this directory (read once at the start:
    /// ChatWeb's ``StaticFiles``) instead of the bundled web client; `nil` (the default): the bundled
    /// one, `swift-async-socket_ChatWeb.resources` beside the executable.
    public var webRoot: String?
    /// `--web-allow-origin ORIGIN` (repeatable): origins besides the web port's own whose pages may open
    /// the chat at `/chat` (``WebOrigins``), as given. Default none.
    public var webAllowedOrigins: [String] = []

    /// The TLS server settings of ``tls``, or nil.
    public var tlsConfiguration: TLSConfiguration? {
        tls.map { TLSConfiguration.server(certificateChain: .file($0.certificateChain), privateKey: .file($0.privateKey)) }
    }

    /// `--tls-cert` and `--tls-key`: PEM files.
    public struct ServerTLSFiles: Equatable, Sendable {
        public var certificateChain: String
        public var privateKey: String
    }

    /// The store file used when `--store` is not given: `im-chat.sqlite` in the current directory.
    public static let defaultStore = "im-chat.sqlite"
    /// The `--store` value that keeps everything in memory.
    public static let memoryStore = ":memory:"

    /// The synopsis printed for `--help` and with every usage error.
    public static let usage =
        "usage: im-server [--host H] [--port P] [--idle-timeout SECONDS] [--name NAME] "
        + "[--no-discovery] [--discovery-group G] [--discovery-port P]\n"
        + "                 [--store FILE] [--store-sync normal|full] [--retain-messages N] [--retain-days D]\n"
        + "                 [--log-level LEVEL] [--password-cost interactive|moderate|minimum]\n"
        + "                 [--max-connections N] [--rate R] [--burst N] [--login-timeout S] [--frame-timeout S]\n"
        + "                 [--tls-cert FILE --tls-key FILE] [--cluster nats://HOST:PORT [--node-id ID]]\n"
        + "                 [--web-port P [--web-host H] [--web-root DIR] [--web-allow-origin ORIGIN]...]"

    /// What each flag means and its default, printed by `--help` after ``usage``.
    public static let help = """
          --host H               interface to listen on (default 127.0.0.1; 0.0.0.0 or :: for every one)
          --port P               TCP port (default 7777; 0 for any free port)
          --idle-timeout S       drop a client silent for S seconds (default 360)
          --presence-interval S  gather logins and logouts for S seconds before announcing them
                                 (default 0.2; each announcement costs a frame per online user)
          --store FILE           SQLite file keeping messages, users, password hashes and read positions
                                 (default ./im-chat.sqlite; :memory: keeps them in memory only)
          --store-sync MODE      normal (default): an acknowledged message survives a crash or kill -9 of
                                 the server; full: it also survives a power loss (one fsync per commit)
          --retain-messages N    keep only the newest N messages of each conversation (default: all)
          --retain-days D        keep only the messages of the last D days (default: all)
          --password-cost C      Argon2id cost of new password hashes: interactive (default: 64 MiB,
                                 about 0.1 s a login), moderate (256 MiB, about 0.6 s) or minimum (8 KiB,
                                 microseconds: for benchmarks only, a stolen hash is then cheap to guess)
          --max-connections N    connections at once; one more is answered serverFull and closed (default:
                                 the open-file limit less 64, at most 10000; im-server first raises its
                                 soft limit to the hard limit)
          --rate R               messages per second one connection may send on average; over it a message
                                 is answered rateLimited and not stored (default 20; heartbeats and
                                 received acknowledgements do not count)
          --burst N              messages one connection may send at once before --rate applies
                                 (default 300); after 1000 refused in a row the connection is closed
          --login-timeout S      close a connection not logged in within S seconds, with loginTimeout
                                 (default 10)
          --frame-timeout S      close a connection that has not finished a started frame within S seconds,
                                 with frameTimeout (default 10)
          --tls-cert FILE        TLS (1.2 or 1.3) on every connection with this certificate chain, PEM,
                                 leaf first (default: plaintext); needs --tls-key. The web port too:
                                 https:// and wss:// (its own origin then https://H:P)
          --tls-key FILE         the certificate's private key, PEM, unencrypted
          --cluster URL          run as one node of a chat of several im-server processes on NATS
                                 JetStream (nats://HOST:PORT; repeat for the servers of a NATS cluster):
                                 messages, users and presence live in NATS, not in --store
          --node-id ID           this node's name in the cluster: letters, digits, _ and -, unique among
                                 the nodes (default node-PID)
          --web-port P           serve HTTP on TCP port P (default: off; 0 for any free port): the web
                                 client at /, the chat over WebSocket at /chat (docs/PROTOCOL.md
                                 "WebSocket"), GET /metrics (Prometheus text format 0.0.4,
                                 docs/METRICS.md) and GET /healthz (200 ok while accepting and, in a
                                 cluster, connected to NATS; 503 otherwise)
          --web-host H           interface of the web port (default 127.0.0.1)
          --web-root DIR         serve the web client's files from DIR (read once at the start; hidden
                                 files, links out of DIR and directory listings never served) instead
                                 of the bundled client (swift-async-socket_ChatWeb.resources, which
                                 must then be beside im-server)
          --web-allow-origin O   let pages of origin O (http://HOST:PORT or https://HOST[:PORT]) open the
                                 chat at /chat too; repeatable. Default: only the web port's own origin
                                 (http://H:P, and localhost beside a loopback H) and clients sending no
                                 Origin; a browser upgrade from any other origin is refused 403
          --name NAME            server name in LAN discovery answers (default chat)
          --no-discovery         do not answer LAN discovery (default: answer)
          --discovery-group G    multicast group (default 239.255.77.77)
          --discovery-port P     UDP port for discovery (default 7777)
          --log-level LEVEL      least severe log lines written: trace, debug, info (default), notice,
                                 warning, error or critical. Lines go to standard output, each
                                 "TIME LEVEL text" with TIME in UTC, ISO 8601, to the millisecond;
                                 im-server's own notices (listening on, limits, shutting down) are
                                 always written
          --version              print the version (im-server \(chatVersion)) and exit
          -h, --help             print this help and exit
        """

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError``.
    public init(arguments: [String]) throws(UsageError) {
        var parser = ArgumentParser(arguments, usage: ServerOptions.usage)
        var configuration = DiscoveryResponder.Configuration()
        var discoveryOff = false
        var tlsCertificate: String?
        var tlsKey: String?
        var natsServers: [String] = []
        var nodeID: String?
        while let option = parser.nextOption() {
            switch option {
            case "--cluster":
                let url = try parser.value(for: option)
                guard url.hasPrefix("nats://") || url.hasPrefix("tls://") else {
                    throw UsageError(description: "--cluster: a NATS URL (nats://HOST:PORT), not \(url)\n\(ServerOptions.usage)")
                }
                natsServers.append(url)
            case "--node-id":
                let id = try parser.value(for: option)
                guard JetStreamMessageStore.isValidName(id) else {
                    throw UsageError(description: "--node-id: letters, digits, _ and - only, not \(id)\n\(ServerOptions.usage)")
                }
                nodeID = id
            case "--host": host = try parser.value(for: option)
            case "--port": port = try parser.port(for: option)
            case "--idle-timeout": idleTimeout = try parser.seconds(for: option)
            case "--presence-interval": presenceInterval = try parser.seconds(for: option)
            case "--name": configuration.serverName = try parser.serverName(for: option, allowEmpty: false)
            case "--no-discovery": discoveryOff = true
            case "--discovery-group": configuration.group = try parser.group(for: option)
            case "--discovery-port": configuration.port = try parser.port(for: option)
            case "--log-level":
                let text = try parser.value(for: option)
                guard let level = Logger.Level(rawValue: text) else {
                    throw UsageError(
                        description:
                            "--log-level: one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)\n\(ServerOptions.usage)"
                    )
                }
                logLevel = level
            case "--store":
                store = try parser.value(for: option)
                guard !store.isEmpty else { throw UsageError(description: "--store needs a file name\n\(ServerOptions.usage)") }
            case "--store-sync":
                switch try parser.value(for: option) {
                case "normal": storeSync = .normal
                case "full": storeSync = .full
                case let other: throw UsageError(description: "--store-sync: normal or full, not \(other)\n\(ServerOptions.usage)")
                }
            case "--retain-messages":
                let text = try parser.value(for: option)
                guard let count = Int(text), count >= 1 else {
                    throw UsageError(description: "--retain-messages: not a positive whole number: \(text)\n\(ServerOptions.usage)")
                }
                retention = RetentionPolicy(maxMessagesPerConversation: count, maxAge: retention.maxAge)
            case "--retain-days":
                let text = try parser.value(for: option)
                guard let days = Double(text), days > 0, days < 1e6 else {
                    throw UsageError(description: "--retain-days: not a positive number of days: \(text)\n\(ServerOptions.usage)")
                }
                retention = RetentionPolicy(
                    maxMessagesPerConversation: retention.maxMessagesPerConversation,
                    maxAge: .milliseconds(Int64((days * 86_400_000).rounded())))
            case "--password-cost":
                switch try parser.value(for: option) {
                case "interactive": passwordCost = .interactive
                case "moderate": passwordCost = .moderate
                case "minimum": passwordCost = .minimum
                case let other:
                    throw UsageError(description: "--password-cost: interactive, moderate or minimum, not \(other)\n\(ServerOptions.usage)")
                }
            case "--max-connections": limits.maxConnections = try parser.count(for: option)
            case "--rate":
                let text = try parser.value(for: option)
                guard let rate = Double(text), rate > 0, rate <= 1e9 else {
                    throw UsageError(
                        description: "\(option): not a positive number of messages per second: \(text)\n\(ServerOptions.usage)")
                }
                limits.messageRate = rate
            case "--burst": limits.messageBurst = try parser.count(for: option)
            case "--login-timeout": limits.loginTimeout = try parser.seconds(for: option)
            case "--frame-timeout": limits.frameTimeout = try parser.seconds(for: option)
            case "--web-port": webPort = try parser.port(for: option)
            case "--web-host": webHost = try parser.value(for: option)
            case "--web-root":
                let directory = try parser.value(for: option)
                guard !directory.isEmpty else { throw UsageError(description: "--web-root needs a directory\n\(ServerOptions.usage)") }
                webRoot = directory
            case "--web-allow-origin":
                let origin = try parser.value(for: option)
                guard WebOrigins.isValid(origin) else {
                    throw UsageError(
                        description: "\(option): an origin (http://HOST:PORT or https://HOST[:PORT]), not \(origin)\n\(ServerOptions.usage)"
                    )
                }
                webAllowedOrigins.append(origin)
            case "--tls-cert": tlsCertificate = try parser.value(for: option)
            case "--tls-key": tlsKey = try parser.value(for: option)
            default: throw parser.unknown(option)
            }
        }
        try parser.expectNoPositionals()
        discovery = discoveryOff ? nil : configuration
        switch (tlsCertificate, tlsKey) {
        case (let certificate?, let key?): tls = ServerTLSFiles(certificateChain: certificate, privateKey: key)
        case (nil, nil): tls = nil
        case (nil, _?): throw UsageError(description: "--tls-key needs --tls-cert\n\(ServerOptions.usage)")
        case (_?, nil): throw UsageError(description: "--tls-cert needs --tls-key\n\(ServerOptions.usage)")
        }
        if natsServers.isEmpty {
            guard nodeID == nil else { throw UsageError(description: "--node-id goes with --cluster\n\(ServerOptions.usage)") }
        } else {
            cluster = ChatCluster.Configuration(servers: natsServers, nodeID: nodeID ?? "node-\(ProcessInfo.processInfo.processIdentifier)")
        }
    }
}
