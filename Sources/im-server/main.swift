// im-server: the chat server. Parses flags, starts IMChat.ChatServer and writes its log to standard output;
// shuts down gracefully on SIGINT or SIGTERM (a second one exits at once).
import AsyncSocket
import ChatCommandLine
import ChatProtocol
import ChatServer
import ChatWeb
import Dispatch
import Foundation
import SocketLog

/// SIGINT and SIGTERM, the signals that shut the server down.
func shutdownSignals() -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    return set
}
// Blocked in this thread before any other exists (threads inherit the mask), so they stay pending
// until waitForShutdownSignals(of:store:logger:) takes them.
var blockedAtStart = shutdownSignals()
pthread_sigmask(SIG_BLOCK, &blockedAtStart, nil)

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
// At most 2 malloc arenas: the logins' 16 store lanes (threads that allocate) made a cluster node's
// RSS grow ~1 KB more per user in arenas' spare room (docs/BENCHMARKS.md "Issue 35 §3").
ResourceLimits.limitMallocArenas(to: 2)
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
/// The web client's files: `--web-root DIR`, or the bundled ones; a clear error, not a crash, when missing.
func webFiles() -> StaticFiles {
    do throws(StaticFilesError) {
        guard let directory = options.webRoot else { return try StaticFiles.loadBundled() }
        return try StaticFiles(directory: URL(fileURLWithPath: directory))
    } catch {
        FileHandle.standardError.write(Data("im-server: cannot serve the web client: \(error)\n".utf8))
        exit(1)
    }
}
/// Read before anything listens, so a missing web client stops the start.
let webClient = options.webPort.map { _ in webFiles() }
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
/// The web port (`--web-port`): the web client, /chat, /metrics and /healthz; kept for as long as the process runs.
let web = options.webPort.map {
    ChatWebServer(
        chat: server, host: options.webHost, port: $0, allowedOrigins: options.webAllowedOrigins, files: webClient ?? .bundled,
        tls: options.tlsConfiguration)
}
if let web {
    do {
        try web.start()
    } catch {
        FileHandle.standardError.write(
            Data("im-server: cannot serve the web port on \(options.webHost):\(options.webPort ?? 0): \(error)\n".utf8))
        exit(1)
    }
    let host = options.webHost.contains(":") ? "[\(options.webHost)]" : options.webHost
    let scheme = web.isSecure ? "https" : "http"
    logger.notice("im-server web port on \(scheme)://\(host):\(web.port)/ (chat at /chat, metrics at /metrics, health at /healthz)")
}
/// Free heap pages go back to the kernel after each burst of sessions (1,000 opened, closed or logged in,
/// then 2 s without any), and every 30 s while sessions come and go or heartbeats and messages go on
/// (1,000 of them since the last trim): the pages a burst of logins freed among the sessions' objects,
/// 50–270 B of RSS per idle user at 19,000 users, which answering heartbeats would otherwise touch again
/// (docs/BENCHMARKS.md "Issue 35 §2", step 6).
let heapTrimmer = HeapTrimmer(
    activity: { server.metrics.sessionEvents },
    background: { server.steadyActivity },
    trimmed: { released, took in
        logger.debug("heap trimmed after a burst of activity (\(released ? "pages released" : "nothing to release"), \(took))")
    })
heapTrimmer.start()
if let discovery = options.discovery, let port = server.discoveryPort {
    logger.notice("im-server answering discovery on \(discovery.group):\(port) as \(discovery.serverName)")
}
/// SIGINT and SIGTERM: the first stops accepting, stores what is pending, tells the clients and exits
/// 0 once they are gone (ChatServer.shutDown); a second one exits at once (status 1). The main thread
/// takes them with sigwait(3) for as long as the process runs: they are blocked in every thread from
/// the start of `main`, so one sent at any moment is pending until taken, never lost. (A DispatchSource
/// beside `dispatchMain()` lost them: the signals were ignored until libdispatch armed the source,
/// which it does after `resume()` returns, so a SIGTERM sent right after the start was discarded and
/// the server ran on: OperatorLogTests, 1 start in 4. Blocking them would not do with `dispatchMain()`,
/// which parks the main thread in `sigsuspend` with no signal blocked.)
func waitForShutdownSignals(of server: ChatServer, store: any MessageStore, logger: Logger) -> Never {
    var signals = shutdownSignals()
    var first = true
    while true {
        var number: Int32 = 0
        guard sigwait(&signals, &number) == 0 else { continue }
        let name = number == SIGINT ? "SIGINT" : "SIGTERM"
        guard first else {
            logger.warning("\(name) again: exiting now")
            exit(1)
        }
        first = false
        logger.notice("\(name): shutting down (a second signal exits at once)")
        server.shutDown { _ in
            // The store is closed, so its -wal file is checkpointed into it and removed.
            (store as? SQLiteMessageStore)?.close()
            exit(0)
        }
    }
}

logger.notice("im-server limits: \(options.limits)")
waitForShutdownSignals(of: server, store: store, logger: logger)
