import Foundation

/// Finds where the first frame ends in a connection's unread bytes (oldest first): the frame's length
/// in bytes once they hold a whole frame, `nil` while they hold only part of one. Throwing means the
/// bytes can never form a frame: the read fails with ``SocketError/badFrame(_:)``. Called on the
/// socket's loop thread each time bytes arrive, always with the unread bytes from the start of the
/// frame; it must not keep the pointer.
public typealias FrameBoundary = @Sendable (UnsafeRawBufferPointer) throws -> Int?

/// Decodes the first frame of a connection's unread bytes (oldest first), in place: returns how many
/// bytes it consumed and the frame they completed, or a `nil` frame when more bytes are needed (it may
/// still consume bytes it has dealt with, such as a too-long frame it discards). Throwing means the bytes
/// can never form a frame: the read fails with ``SocketError/badFrame(_:)``. Called on the socket's loop
/// thread each time bytes arrive; it must not keep the pointer. SocketFraming's decoders supply these.
public typealias FrameDecoding = @Sendable (UnsafeRawBufferPointer) throws -> (consumed: Int, frame: (any Sendable)?)

/// One queued read: what ends it, its timeout and its tag (GCDAsyncSocket's `GCDAsyncReadPacket`).
struct ReadRequest {
    enum Kind {
        /// Whatever is available, at most `maxLength` bytes (0 = no limit).
        case available(maxLength: Int)
        /// Exactly `length` bytes.
        case toLength(Int)
        /// Up to and including `delimiter`, failing when `maxLength` bytes (0 = no limit) hold none.
        case toData(delimiter: [UInt8], maxLength: Int)
        /// One frame, whose length `boundary` finds; failing when `maxLength` bytes (0 = no limit) hold
        /// no whole frame.
        case toFrameEnd(boundary: FrameBoundary, maxLength: Int)
        /// Every whole frame available (at least one) as one run of bytes, each frame's length found by
        /// `boundary`; failing when `maxLength` bytes (0 = no limit) hold no whole frame.
        case toLastFrameEnd(boundary: FrameBoundary, maxLength: Int)
        /// One decoded frame; failing when `maxLength` bytes (0 = no limit) hold no whole frame.
        case decodedFrame(decoding: FrameDecoding, maxLength: Int)
    }

    /// What the request needs from the unread bytes.
    enum Match {
        /// Not enough bytes yet; `scanned` bytes from the start hold no delimiter.
        case needMore(scanned: Int)
        /// The first `length` bytes complete the read.
        case complete(length: Int)
        /// `maxLength` bytes hold no delimiter (or no whole frame).
        case maxedOut(maxLength: Int)
        /// The bytes can never form a frame; carries the framing's reason.
        case invalid(String)
        /// The first `consumed` bytes made `frame`.
        case decoded(consumed: Int, frame: any Sendable)
        /// The decoder dealt with the first `count` bytes without completing a frame; match again after.
        case skip(Int)
    }

    let kind: Kind
    /// Seconds; negative means no timeout.
    let timeout: Double
    let tag: Int
    /// The caller's buffer the bytes are written into, at `bufferOffset` (GCDAsyncSocket's
    /// `buffer:bufferOffset:`), or nil.
    var buffer: NSMutableData?
    var bufferOffset = 0
    /// Identifies the request to its timeout timer; assigned when queued.
    var id: UInt64 = 0
    /// Seconds of timeout extensions granted so far.
    var extensions: Double = 0
    /// Bytes already reported through the partial-progress callback.
    var reportedBytes = 0
    /// Bytes at the start of the unread data already searched for the delimiter, so no byte is
    /// searched twice (a delimiter may straddle the boundary, so the search resumes a little earlier).
    var scanned = 0

    init(kind: Kind, timeout: Double, tag: Int, buffer: NSMutableData? = nil, bufferOffset: Int = 0) {
        self.kind = kind
        self.timeout = timeout
        self.tag = tag
        self.buffer = buffer
        self.bufferOffset = bufferOffset
    }

    /// A read to a delimiter or frame end with no maximum length, whose need for buffered bytes is
    /// bounded only by ``TCPSocket/maxBufferedReadBytes``.
    var isUnbounded: Bool {
        switch kind {
        case .toData(_, 0), .toFrameEnd(_, 0), .toLastFrameEnd(_, 0), .decodedFrame(_, 0): return true
        default: return false
        }
    }

    /// Bytes of the `unread` count that count towards this request, for progress reports: for a read to
    /// length, up to its length; to a delimiter, up to its maximum; none for a read of available bytes
    /// (it completes as soon as anything arrives).
    func bytesDone(unread: Int) -> Int {
        switch kind {
        case .available: return 0
        case .toLength(let length): return min(unread, length)
        case .toData(_, let maxLength), .toFrameEnd(_, let maxLength), .toLastFrameEnd(_, let maxLength),
             .decodedFrame(_, let maxLength):
            return maxLength > 0 ? min(unread, maxLength) : unread
        }
    }

    /// Checks `unread` (the bytes not yet handed to a read, oldest first) against this request.
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
        case .toFrameEnd(let boundary, let maxLength):
            return ReadRequest.matchFrame(boundary, maxLength: maxLength, in: unread)
        case .toLastFrameEnd(let boundary, let maxLength):
            // The fast path asks `boundary` only; anything but a whole frame ends the run, and when the
            // run is empty `matchFrame` says why. Whole frames before an incomplete or bad one go first.
            var end = 0
            while end < unread.count {
                let rest = UnsafeRawBufferPointer(rebasing: unread[end...])
                guard let length = try? boundary(rest), length > 0, length <= rest.count,
                      maxLength == 0 || length <= maxLength else { break }
                end += length
            }
            return end > 0 ? .complete(length: end) : ReadRequest.matchFrame(boundary, maxLength: maxLength, in: unread)
        case .decodedFrame(let decoding, let maxLength):
            let result: (consumed: Int, frame: (any Sendable)?)
            do {
                result = try decoding(unread)
            } catch {
                return .invalid(ReadRequest.reason(error))
            }
            guard result.consumed >= 0 && result.consumed <= unread.count else {
                return .invalid("the frame decoder consumed \(result.consumed) bytes of \(unread.count) available")
            }
            if let frame = result.frame { return .decoded(consumed: result.consumed, frame: frame) }
            if result.consumed > 0 { return .skip(result.consumed) }
            if maxLength > 0 && unread.count >= maxLength { return .maxedOut(maxLength: maxLength) }
            return .needMore(scanned: unread.count)
        }
    }

    /// Where the first frame of `unread` ends, by `boundary`.
    private static func matchFrame(_ boundary: FrameBoundary, maxLength: Int, in unread: UnsafeRawBufferPointer) -> Match {
        let length: Int?
        do {
            length = try boundary(unread)
        } catch {
            return .invalid(ReadRequest.reason(error))
        }
        guard let length else {
            if maxLength > 0 && unread.count >= maxLength { return .maxedOut(maxLength: maxLength) }
            return .needMore(scanned: unread.count)
        }
        guard length > 0 && length <= unread.count else {
            return .invalid("the frame boundary gave \(length) bytes of \(unread.count) available")
        }
        if maxLength > 0 && length > maxLength { return .maxedOut(maxLength: maxLength) }
        return .complete(length: length)
    }

    /// The text of a framing error, without a second "bad frame:" when it is one already.
    static func reason(_ error: any Error) -> String {
        if case .badFrame(let reason)? = error as? SocketError { return reason }
        return "\(error)"
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

extension ReadRequest.Match: Equatable {
    /// Equal cases with equal values; decoded frames compare by their description (for tests).
    static func == (lhs: ReadRequest.Match, rhs: ReadRequest.Match) -> Bool {
        switch (lhs, rhs) {
        case (.needMore(let a), .needMore(let b)), (.complete(let a), .complete(let b)), (.maxedOut(let a), .maxedOut(let b)),
             (.skip(let a), .skip(let b)):
            return a == b
        case (.invalid(let a), .invalid(let b)): return a == b
        case (.decoded(let a, let x), .decoded(let b, let y)): return a == b && "\(x)" == "\(y)"
        default: return false
        }
    }
}
