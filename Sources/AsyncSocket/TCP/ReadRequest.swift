import Foundation

/// What a ``ByteConsumer`` did with the unread bytes it was shown: SwiftNIO's `DecodingState` for
/// `ByteToMessageDecoder`, with the consumed count in the answer instead of a moved reader index.
public enum ByteConsumption: Sendable, Equatable {
    /// The read is complete. It took the first `consumed` bytes (0 or more); the rest stay buffered for
    /// the next read, in order.
    case complete(consumed: Int)
    /// The read goes on and needs more bytes. It took the first `consumed` bytes (0 or more: frames it
    /// handed on, bytes it skipped); it is asked again, with the bytes after those, once more arrive.
    case needMoreData(consumed: Int)
}

/// The core's one framing primitive (SwiftNIO's `ByteToMessageDecoder` contract): given a connection's
/// unread bytes, oldest first, says how many it consumed and whether the read is complete.
///
/// Called on the socket's event-loop thread whenever bytes arrive while its read is the current one,
/// always with every unread byte from the start; the pointer is valid only during the call and must not
/// be kept. A consumer may hand frames on from inside the call (a borrowed view of each frame's bytes,
/// with no copy). Throwing means the bytes can never be valid: the connection closes with
/// ``SocketError/decodingFailed(_:)`` carrying the thrown error, after the reads before it completed.
/// Consuming more bytes than it was shown is a programming error, reported the same way.
public typealias ByteConsumer = @Sendable (UnsafeRawBufferPointer) throws -> ByteConsumption

/// One queued read: what ends it, its timeout, its tag and how it completes (GCDAsyncSocket's
/// `GCDAsyncReadPacket`). Delegate reads and ``TCPConnection`` reads are both these; only the
/// completion differs.
package struct ReadRequest {
    package enum Kind {
        /// Whatever is available, at most `maxLength` bytes (0 = no limit).
        case available(maxLength: Int)
        /// Exactly `length` bytes (0 only for ``TCPConnection``, which completes it at once).
        case toLength(Int)
        /// Up to and including `delimiter`, failing when `maxLength` bytes (0 = no limit) hold none.
        case toData(delimiter: [UInt8], maxLength: Int)
        /// As long as `consumer` needs; failing when `maxLength` unread bytes (0 = no limit) leave it
        /// wanting more without consuming any.
        case consuming(ByteConsumer, maxLength: Int)
    }

    /// How a read ends: with a delegate callback, or by calling a closure on the loop thread.
    package enum Completion {
        /// ``TCPSocketDelegate/socket(_:didRead:withTag:)``, the bytes written into `buffer` at `offset`
        /// when one was given (GCDAsyncSocket's `buffer:bufferOffset:`).
        case delegate(buffer: NSMutableData?, offset: Int)
        /// `handler` with the bytes (empty for a consuming read) or the error that ended the read. Such a
        /// read never asks the delegate to extend its timeout nor reports progress to it; with a
        /// `token`, it can be withdrawn (``TCPSocket/withdrawRead(_:)``).
        case handler(ReadToken?, @Sendable (Result<Data, SocketError>) -> Void)
    }

    /// What the request needs from the unread bytes.
    enum Match: Equatable {
        /// Not enough bytes yet; `scanned` bytes from the start hold no delimiter.
        case needMore(scanned: Int)
        /// The first `length` bytes complete the read.
        case complete(length: Int)
        /// The consumer took the first `count` bytes and needs more; match again after them.
        case consumed(Int)
        /// `maxLength` bytes hold no delimiter (or no whole frame).
        case maxedOut(maxLength: Int)
        /// The consumer threw (or broke its contract): the bytes can never be valid.
        case invalid(DecodingFailure)
    }

    let kind: Kind
    /// Seconds; negative means no timeout.
    let timeout: Double
    let tag: Int
    let completion: Completion
    /// Identifies the request to its timeout timer; assigned when queued.
    var id: UInt64 = 0
    /// Seconds of timeout extensions granted so far.
    var extensions: Double = 0
    /// Bytes already reported through the partial-progress callback.
    var reportedBytes = 0
    /// Whether the read, queued after the connection ended with an error, reads the bytes it left
    /// unread (``TCPConnection``'s reads); other reads are then refused as not connected, as a delegate
    /// read is: the delegate was handed those bytes by `socketWillDisconnect`.
    var readsLeftover = false
    /// Bytes at the start of the unread data already searched for the delimiter, so no byte is
    /// searched twice (a delimiter may straddle the boundary, so the search resumes a little earlier).
    var scanned = 0

    init(kind: Kind, timeout: Double, tag: Int, completion: Completion) {
        self.kind = kind
        self.timeout = timeout
        self.tag = tag
        self.completion = completion
    }

    /// The read's maximum length, or 0 when it has none.
    var maxLength: Int {
        switch kind {
        case .available: return 0
        case .toLength(let length): return length
        case .toData(_, let maxLength), .consuming(_, let maxLength): return maxLength
        }
    }

    /// What a handler read completes with when the first `length` bytes of `unread` complete it: those
    /// bytes, or nothing for a consuming read (its consumer has handed on what it took).
    func handlerData(_ unread: UnsafeRawBufferPointer, length: Int) -> Data {
        if case .consuming = kind { return Data() }
        return Data(UnsafeRawBufferPointer(rebasing: unread[..<length]))
    }

    /// A read of zero bytes (``TCPConnection/read(exactly:timeout:)`` with 0): complete as soon as it is
    /// the current read, with or without bytes buffered, even after the peer's data has ended.
    var isEmptyRead: Bool {
        if case .toLength(0) = kind { return true }
        return false
    }

    /// A read to a delimiter or through a consumer with no maximum length, whose need for buffered
    /// bytes is bounded only by ``TCPSocket/maxBufferedReadBytes``.
    var isUnbounded: Bool {
        switch kind {
        case .toData(_, 0), .consuming(_, 0): return true
        default: return false
        }
    }

    /// Bytes of the `unread` count that count towards this request, for progress reports: for a read to
    /// length, up to its length; to a delimiter or through a consumer, up to its maximum; none for a read
    /// of available bytes (it completes as soon as anything arrives).
    func bytesDone(unread: Int) -> Int {
        switch kind {
        case .available: return 0
        case .toLength(let length): return min(unread, length)
        case .toData(_, let maxLength), .consuming(_, let maxLength):
            return maxLength > 0 ? min(unread, maxLength) : unread
        }
    }

    /// Checks `unread` (the bytes not yet handed to a read, oldest first) against this request.
    func match(_ unread: UnsafeRawBufferPointer) -> Match { matcher.match(unread) }

    /// What the request matches the unread bytes with, copied out of the queue on its own (the request
    /// is not copied for a match on the per-message path).
    var matcher: Matcher { Matcher(kind: kind, scanned: scanned) }

    /// A request's kind and how far its delimiter search got.
    struct Matcher {
        let kind: Kind
        let scanned: Int

        /// Checks `unread` (the bytes not yet handed to a read, oldest first) against the request.
        func match(_ unread: UnsafeRawBufferPointer) -> Match {
            switch kind {
            case .available(let maxLength):
                guard unread.count > 0 else { return .needMore(scanned: 0) }
                return .complete(length: maxLength > 0 ? min(maxLength, unread.count) : unread.count)
            case .toLength(let length):
                return unread.count >= length ? .complete(length: length) : .needMore(scanned: unread.count)
            case .toData(let delimiter, let maxLength):
                let limit = maxLength > 0 ? min(maxLength, unread.count) : unread.count
                let start = max(0, scanned - (delimiter.count - 1))
                if let end = ReadRequest.find(delimiter, in: unread, from: start, upTo: limit) {
                    return .complete(length: end)
                }
                if maxLength > 0 && unread.count >= maxLength { return .maxedOut(maxLength: maxLength) }
                return .needMore(scanned: limit)
            case .consuming(let consumer, let maxLength):
                let consumption: ByteConsumption
                do {
                    consumption = try consumer(unread)
                } catch {
                    return .invalid(DecodingFailure(error))
                }
                switch consumption {
                case .complete(let consumed) where consumed >= 0 && consumed <= unread.count:
                    return .complete(length: consumed)
                case .needMoreData(let consumed) where consumed > 0 && consumed <= unread.count:
                    return .consumed(consumed)
                case .needMoreData(0):
                    if maxLength > 0 && unread.count >= maxLength { return .maxedOut(maxLength: maxLength) }
                    return .needMore(scanned: unread.count)
                case .complete(let consumed), .needMoreData(let consumed):
                    return .invalid(DecodingFailure(ConsumerContractViolation(consumed: consumed, available: unread.count)))
                }
            }
        }
    }

    /// The index just past the first `delimiter` within `bytes[from..<upTo]`, or nil.
    static func find(_ delimiter: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int, upTo: Int) -> Int? {
        let length = delimiter.count
        guard let base = bytes.baseAddress, length > 0, upTo - from >= length else { return nil }
        let first = delimiter[0]
        var index = from
        let lastStart = upTo - length
        return delimiter.withUnsafeBytes { raw -> Int? in
            guard let needle = raw.baseAddress else { return nil }
            while index <= lastStart {
                guard let hit = memchr(base + index, Int32(first), lastStart - index + 1) else { return nil }
                let position = base.distance(to: UnsafeRawPointer(hit))
                if length == 1 || memcmp(base + position, needle, length) == 0 {
                    return position + length
                }
                index = position + 1
            }
            return nil
        }
    }
}

/// Identifies one read queued with a completion handler, so it can be withdrawn before it completes
/// (``TCPSocket/withdrawRead(_:)``). Compared by identity.
package final class ReadToken: Sendable {
    package init() {}
}

/// A ``ByteConsumer`` said it consumed bytes it was not shown (or a negative count).
struct ConsumerContractViolation: Error, CustomStringConvertible {
    let consumed: Int
    let available: Int
    var description: String { "the byte consumer reported \(consumed) bytes consumed of \(available) available" }
}
