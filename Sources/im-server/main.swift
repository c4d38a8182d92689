// im-server: the chat server. Parses flags, starts IMChat.ChatServer and writes its log to standard output;
// shuts down gracefully on SIGINT or SIGTERM (a second one exits at once).
import AsyncSocket
import Dispatch
import Foundation
import IMChat
import SocketLog

/// One line to standard output, unbuffered, so pipes see it at once.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    say(ServerOptions.usage)
    say(ServerOptions.help)
    exit(0)
}
if arguments.contains("--version") {
    say("im-server \(chatVersion)")
    exit(0)
}
// One descriptor per connection: the default connection limit follows the raised soft limit.
ResourceLimits.raiseOpenFileLimit()
let options: ServerOptions
do {
    options = try ServerOptions(arguments: arguments)
} catch {
    FileHandle.standardError.write(Data("im-server: \(error)\n".utf8))
    exit(64)
}
// The operator's log: every line of every part to standard output, "TIME LEVEL text".
let logLevel = options.logLevel
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardOutput(label: label)
    // im-server's own lines (listening on, limits, shutting down) are notices: shown at any level up to
    // notice, so the port chosen for --port 0 can always be read.
    handler.logLevel = label == "im-server" ? min(logLevel, .notice) : logLevel
    return handler
}
let logger = Logger(label: "im-server")
let store: any MessageStore
var cluster: ChatCluster?
do {
    if let configuration = options.cluster {
        let joined = try ChatCluster(configuration)
        cluster = joined
        store = joined.store
    } else {
        store =
            options.store == ServerOptions.memoryStore
            ? InMemoryMessageStore() : try SQLiteMessageStore(path: options.store, synchronous: options.storeSync)
    }
} catch {
    let what = options.cluster.map { "join the cluster at \($0.servers.joined(separator: ", "))" } ?? "open the store \(options.store)"
    FileHandle.standardError.write(Data("im-server: cannot \(what): \(error)\n".utf8))
    exit(1)
}
let server = ChatServer(
    host: options.host, port: options.port, idleTimeout: options.idleTimeout,
    discovery: options.discovery, store: store, passwordHasher: PasswordHasher(limits: options.passwordCost),
    retention: options.retention,
    presenceInterval: options.presenceInterval, limits: options.limits,
    tls: options.tlsConfiguration, cluster: cluster)
do {
    try server.start()
} catch {
    FileHandle.standardError.write(Data("im-server: cannot listen on \(options.host):\(options.port): \(error)\n".utf8))
    exit(1)
}
let storeDescription =
    cluster.map { "in NATS JetStream, as node \($0.nodeID) of a cluster" }
    ?? (options.store == ServerOptions.memoryStore ? "in memory only" : "in \(options.store)")
let security = options.tls.map { " with TLS (\($0.certificateChain))" } ?? ""
logger.notice(
    "im-server listening on \(server.localAddress?.description ?? "\(options.host):\(server.port)")\(security) (messages kept \(storeDescription))"
)
if let discovery = options.discovery, let port = server.discoveryPort {
    logger.notice("im-server answering discovery on \(discovery.group):\(port) as \(discovery.serverName)")
}
/// SIGINT and SIGTERM: the first stops accepting, stores what is pending, tells the clients and exits
/// 0 once they are gone (ChatServer.shutDown); a second one exits at once (status 1). The signals are
/// ignored first, so only the dispatch sources see them. Returns the sources, which must be kept.
func handleShutdownSignals(of server: ChatServer, store: any MessageStore, logger: Logger) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "im-server.signals")
    let signalled = LockedValue(false)
    return [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, name in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler { @Sendable in
            guard
                signalled.withLock({
                    let first = !$0; $0 = true; return first
                })
            else {
                logger.warning("\(name) again: exiting now")
                exit(1)
            }
            logger.notice("\(name): shutting down (a second signal exits at once)")
            server.shutDown { _ in
                // The store is closed, so its -wal file is checkpointed into it and removed.
                (store as? SQLiteMessageStore)?.close()
                exit(0)
            }
        }
        source.resume()
        return source
    }
}

let signalSources = handleShutdownSignals(of: server, store: store, logger: logger)
logger.notice("im-server limits: \(options.limits)")
dispatchMain()
