import Foundation
import Synchronization

/// Where a ``TCPSocket`` is in its life, with what each stage owns: SwiftNIO keeps a channel's state
/// the same way. Closing is one assignment, so no flag of a connection can outlive it, and a state such
/// as "end of stream while listening" cannot be written down. Loop thread only.
enum Lifecycle {
    /// Never connected or listening.
    case idle
    /// A connect is under way; reads and writes may already be queued on the connection.
    case connecting(ConnectionState, ConnectAttempt)
    /// Connected: reading, writing, half-closing.
    case connected(ConnectionState)
    /// Accepting connections.
    case listening(Acceptor)
    /// The last connection (or connect, or listening) ended with `error` (``SocketError/connectionClosed``
    /// when this side ended it on purpose). After an error, `leftover` keeps the bytes the connection
    /// received that no read took, for handler reads (``TCPConnection``) to take.
    case closed(SocketError, leftover: ConnectionState?)

    /// The stage, without its data.
    var state: TCPSocket.State {
        switch self {
        case .idle: return .idle
        case .connecting: return .connecting
        case .connected: return .connected
        case .listening: return .listening
        case .closed: return .disconnected
        }
    }

    /// The connection of a connecting or connected socket.
    var connection: ConnectionState? {
        switch self {
        case .connecting(let connection, _), .connected(let connection): return connection
        default: return nil
        }
    }
}

/// What one connection owns while it lasts, from the start of its connect (or its accept) to its end:
/// the descriptor, the read and write queues, the received bytes, the timers, the half-close and
/// disconnect-after state. Loop thread only (hence unchecked `Sendable`: closures scheduled on the loop
/// carry it); the properties skip the compiler's dynamic exclusivity
/// checks (a measurable cost on the per-message path), which the loop's confinement makes safe.
final class ConnectionState: @unchecked Sendable {
    // Word-sized fields first, then the small ones: stored properties are laid out in declaration
    // order, and every idle connection carries this object (192 bytes rather than 256).

    // Reading.
    @exclusivity(unchecked) var readQueue = RequestQueue<ReadRequest>()
    @exclusivity(unchecked) var buffer = ReadBuffer()
    @exclusivity(unchecked) var readTimeout = RequestTimeout()
    /// The end of the connection when a consumer's frame handler closed the socket during a match:
    /// reported once the bytes the consumer took are counted (``TCPSocket/processReads(_:incoming:)``).
    @exclusivity(unchecked) var deferredEnd: DeferredEnd?

    // Writing.
    @exclusivity(unchecked) var writeQueue = RequestQueue<WriteRequest>()
    /// The bytes of the staged writes in the queue (``TCPSocket/write(copying:withTimeout:tag:)``), in
    /// queue order, the sent ones consumed.
    @exclusivity(unchecked) var stagedWrites = ReadBuffer()
    @exclusivity(unchecked) var writeTimeout = RequestTimeout()
    /// Bytes queued for writing and not yet sent; mirrored in ``TCPSocket/queuedWriteBytesMirror``.
    @exclusivity(unchecked) var queuedWriteBytes = 0

    /// The connected descriptor; -1 while connecting.
    @exclusivity(unchecked) var fd: Int32
    @exclusivity(unchecked) var interest: SelectorInterest = []
    @exclusivity(unchecked) var isProcessingReads = false
    /// A read's ``ReadRequest/match(_:)`` is running: a consumer may be handing frames on, and has not
    /// yet said how many bytes it took.
    @exclusivity(unchecked) var isMatching = false
    /// The peer sent FIN; no more bytes will arrive.
    @exclusivity(unchecked) var readEOF = false
    /// In half-close mode, the delegate has been told the read stream closed.
    @exclusivity(unchecked) var readStreamClosed = false
    @exclusivity(unchecked) var writeBlocked = false
    @exclusivity(unchecked) var flushScheduled = false
    @exclusivity(unchecked) var needsFlush = false
    @exclusivity(unchecked) var isAboveWriteHighWatermark = false
    /// ``TCPSocket/closeWriteStreamAfterWriting()`` was called; `shutdown(2)` follows the last queued write.
    @exclusivity(unchecked) var writeStreamClosing = false
    @exclusivity(unchecked) var writeStreamClosed = false
    // Ending (GCDAsyncSocket's kDisconnectAfterReads / kDisconnectAfterWrites).
    @exclusivity(unchecked) var endAfterReads = false
    @exclusivity(unchecked) var endAfterWrites = false

    init(fd: Int32 = -1) {
        self.fd = fd
    }
}

/// A connect under way: its timeout and the Happy Eyeballs attempts. Loop thread only (hence unchecked
/// `Sendable`).
final class ConnectAttempt: @unchecked Sendable {
    /// The attempt's number (``TCPSocket/connectGeneration`` when it started).
    let generation: UInt64
    var timer: Scheduled?
    var attempts: ConnectionAttempts?

    init(generation: UInt64) {
        self.generation = generation
    }

    /// Stops the timer and every attempt still running.
    func cancel() {
        timer?.cancel()
        timer = nil
        attempts?.cancel()
        attempts = nil
    }
}

/// How a connection ended while a consumer was matching (``ConnectionState/deferredEnd``): kept apart
/// (a reference, rarely made) so that every connection does not carry its size.
final class DeferredEnd {
    let error: SocketError?
    let unsentTags: [Int]
    let wasConnected: Bool

    init(error: SocketError?, unsentTags: [Int], wasConnected: Bool) {
        self.error = error
        self.unsentTags = unsentTags
        self.wasConnected = wasConnected
    }
}
