import AsyncSocket
import Foundation
import NATSClient

/// One node's connection to the chat's cluster (`im-server --cluster nats://HOST:PORT`, issue 14):
/// several `im-server` processes on one NATS JetStream behave as one chat. Hand ``store`` and the
/// cluster itself to ``ChatServer/init(host:port:idleTimeout:discovery:store:passwordHasher:loginThrottle:retention:presenceInterval:limits:group:logger:tls:cluster:)``.
///
/// What goes over NATS (every name starts with ``Configuration/prefix``, `chat` by default):
/// - messages, users, positions: ``JetStreamMessageStore``, so any node delivers what another stored;
///   every node reads the message stream from its start-up on (an ordered JetStream consumer) and
///   hands each message stored by another node to its own readers;
/// - presence: bucket `PREFIX_presence`, a key per logged-in user (name → node and a SHA-256 of its
///   resume token), watched by every node; bucket `PREFIX_nodes`, a key per live node, written every
///   ``nodeRefresh`` and expiring after ``nodeLifetime``, so the users of a node that died go offline
///   on the others by themselves within that time (a node missing from a refresh's listing of the
///   bucket is dead only once a read of its key finds none);
/// - core NATS subjects `PREFIX.node.NODE` (take over a user's session: a login elsewhere with its
///   resume token or password) and `PREFIX.receipt` (read receipts for a reader on another node).
///
/// NATS's callbacks arrive on libnats' threads and are handed to the server's routing queue; NATS calls
/// other than the store's run on a queue of the cluster's own, so no event loop ever waits for NATS.
/// While NATS is unreachable, the store's calls fail at once: clients get `storeUnavailable` for
/// their messages and logins cannot be checked; libnats reconnects by itself (every 250 ms, forever)
/// and the node works again when NATS is back. Logins and logouts meanwhile are not written to the
/// presence bucket then (each write would wait for its timeout); at the reconnect the node writes its
/// key, every user logged in on it, and removes those who left. A write that fails while NATS is
/// connected (a timeout) is made again at the node's next refresh.
public final class ChatCluster: Sendable {
    /// Where the cluster's NATS is and who this node is.
    public struct Configuration: Sendable, Equatable {
        /// NATS server URLs (`nats://127.0.0.1:4222`); several for a NATS cluster.
        public var servers: [String]
        /// This node's name in the cluster: letters, digits, `_` and `-`; unique among the nodes.
        public var nodeID: String
        /// What the names of the chat's streams, buckets and subjects start with. Default `chat`.
        public var prefix = "chat"
        /// Copies JetStream keeps of every record. Default 1 (one NATS server).
        public var replicas = 1

        /// A configuration for node `nodeID` on `servers`.
        public init(servers: [String], nodeID: String) {
            self.servers = servers
            self.nodeID = nodeID
        }
    }

    /// How often a node writes its key in `PREFIX_nodes`: every 2 s.
    public static let nodeRefresh: Duration = .seconds(2)
    /// How long a node's key lives without being written again: 6 s. A node that died is offline for
    /// the others (and its users with it) at most this long after its last write, plus one
    /// ``nodeRefresh`` for the others to notice.
    public static let nodeLifetime: Duration = .seconds(6)

    /// The settings it was made with.
    public let configuration: Configuration
    /// This node's name.
    public var nodeID: String { configuration.nodeID }
    /// The cluster's message store (shared by every node).
    public let store: JetStreamMessageStore
    let connection: NATSConnection
    let presence: KeyValueBucket
    let nodes: KeyValueBucket
    /// Connection state changes, for the server's log (set before the server starts).
    let events = LockedValue<(@Sendable (NATSConnection.Event) -> Void)?>(nil)

    /// Connects to NATS and opens (creating when missing) the store and the presence buckets.
    /// Blocks the calling thread for the connect and JetStream's answers.
    /// - Throws: ``NATSError`` when NATS cannot be reached or has no JetStream;
    ///   ``NATSError/invalid(_:)`` for a node id or prefix with other characters.
    public init(_ configuration: Configuration) throws {
        let id = configuration.nodeID
        guard JetStreamMessageStore.isValidName(id) else {
            throw NATSError.invalid("a node id is letters, digits, _ and - only: \(id)")
        }
        self.configuration = configuration
        var options = NATSConnection.Options(servers: configuration.servers)
        options.name = "im-server \(id)"
        let events = self.events
        connection = try NATSConnection.connect(options) { event in events.withLock { $0 }?(event) }
        store = try JetStreamMessageStore(
            connection: connection, prefix: configuration.prefix, replicas: configuration.replicas, origin: id)
        let jetStream = try connection.jetStream()
        presence = try jetStream.keyValue(bucket: configuration.prefix + "_presence", replicas: configuration.replicas)
        nodes = try jetStream.keyValue(bucket: configuration.prefix + "_nodes", maxAge: Self.nodeLifetime, replicas: configuration.replicas)
    }

    /// Whether the node is connected to NATS now.
    public var isConnected: Bool { connection.isConnected }

    /// Closes the connection to NATS (the node's users stay in the presence bucket until the others
    /// see its key expire; ``ChatServer`` removes them first on a graceful shutdown).
    public func close() { connection.close() }
}
