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
    // Word-sized fields first, then the small ones, and the flags as bits: stored properties are laid
    // out in declaration order, and every idle connection carries this object (375 bytes, one 384-byte
    // heap block).

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

    /// TLS once ``TCPSocket/startTLS(_:)`` was called; nil for plaintext.
    @exclusivity(unchecked) var tls: TLSState?

    /// The connected descriptor; -1 while connecting.
    @exclusivity(unchecked) var fd: Int32
    @exclusivity(unchecked) var interest: SelectorInterest = []
    @exclusivity(unchecked) private var flags: Flags = []

    /// The connection's yes/no state, one bit each.
    private struct Flags: OptionSet {
        let rawValue: UInt16
        static let isProcessingReads = Flags(rawValue: 1 << 0)
        static let isMatching = Flags(rawValue: 1 << 1)
        static let readEOF = Flags(rawValue: 1 << 2)
        static let readStreamClosed = Flags(rawValue: 1 << 3)
        static let writeBlocked = Flags(rawValue: 1 << 4)
        static let flushScheduled = Flags(rawValue: 1 << 5)
        static let needsFlush = Flags(rawValue: 1 << 6)
        static let isAboveWriteHighWatermark = Flags(rawValue: 1 << 7)
        static let writeStreamClosing = Flags(rawValue: 1 << 8)
        static let writeStreamClosed = Flags(rawValue: 1 << 9)
        static let endAfterReads = Flags(rawValue: 1 << 10)
        static let endAfterWrites = Flags(rawValue: 1 << 11)
    }

    @inline(__always)
    private func flag(_ flag: Flags) -> Bool { flags.contains(flag) }

    @inline(__always)
    private func setFlag(_ flag: Flags, _ value: Bool) {
        if value { flags.insert(flag) } else { flags.remove(flag) }
    }

    var isProcessingReads: Bool {
        get { flag(.isProcessingReads) }
        set { setFlag(.isProcessingReads, newValue) }
    }
    /// A read's ``ReadRequest/match(_:)`` is running: a consumer may be handing frames on, and has not
    /// yet said how many bytes it took.
    var isMatching: Bool {
        get { flag(.isMatching) }
        set { setFlag(.isMatching, newValue) }
    }
    /// The peer sent FIN; no more bytes will arrive.
    var readEOF: Bool {
        get { flag(.readEOF) }
        set { setFlag(.readEOF, newValue) }
    }
    /// In half-close mode, the delegate has been told the read stream closed.
    var readStreamClosed: Bool {
        get { flag(.readStreamClosed) }
        set { setFlag(.readStreamClosed, newValue) }
    }
    var writeBlocked: Bool {
        get { flag(.writeBlocked) }
        set { setFlag(.writeBlocked, newValue) }
    }
    var flushScheduled: Bool {
        get { flag(.flushScheduled) }
        set { setFlag(.flushScheduled, newValue) }
    }
    var needsFlush: Bool {
        get { flag(.needsFlush) }
        set { setFlag(.needsFlush, newValue) }
    }
    var isAboveWriteHighWatermark: Bool {
        get { flag(.isAboveWriteHighWatermark) }
        set { setFlag(.isAboveWriteHighWatermark, newValue) }
    }
    /// ``TCPSocket/closeWriteStreamAfterWriting()`` was called; `shutdown(2)` follows the last queued write.
    var writeStreamClosing: Bool {
        get { flag(.writeStreamClosing) }
        set { setFlag(.writeStreamClosing, newValue) }
    }
    var writeStreamClosed: Bool {
        get { flag(.writeStreamClosed) }
        set { setFlag(.writeStreamClosed, newValue) }
    }
    // Ending (GCDAsyncSocket's kDisconnectAfterReads / kDisconnectAfterWrites).
    var endAfterReads: Bool {
        get { flag(.endAfterReads) }
        set { setFlag(.endAfterReads, newValue) }
    }
    var endAfterWrites: Bool {
        get { flag(.endAfterWrites) }
        set { setFlag(.endAfterWrites, newValue) }
    }

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
