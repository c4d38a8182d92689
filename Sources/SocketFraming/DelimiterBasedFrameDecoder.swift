import Foundation

/// Splits a byte stream into frames ended by a delimiter, such as CRLF: Netty's
/// `DelimiterBasedFrameDecoder` (`io.netty.handler.codec.DelimiterBasedFrameDecoder`; MISSION.md M3.2),
/// and GCDAsyncSocket's `readDataToData:` applied to every frame.
///
/// Bytes as TCP delivers them, and the frames that come out with the delimiter CRLF, stripped:
///
///     reads:   | 68 69 0D | 0A 0D 0A 6F 6B 0D 0A 62 | 79 65 0D 0A |
///              |  h  i \r | \n \r \n  o  k \r \n  b |  y  e \r \n |
///     frames:              "hi", "", "ok"                 "bye"
///
/// With several delimiters, the frame ends at the delimiter that *starts* earliest, so the shortest
/// frame wins, as in Netty; when two start at the same byte, the one listed first wins. With
/// `["\r\n", "\n"]`, `"a\r\nb\n"` is the frames `"a"` and `"b"`. The result never depends on how the
/// bytes are cut: a frame whose delimiter might still turn out to be a longer one that starts earlier is
/// held back until the bytes that decide arrive (or the stream ends).
///
/// Decoding is linear in the bytes received: for each delimiter the decoder remembers how far it has
/// searched, and never examines a byte twice (apart from the last `delimiter.count - 1` bytes, which may
/// begin a delimiter that is still arriving).
///
/// `maxFrameLength` is Netty's: the most bytes of a frame *before* its delimiter. On the wire a frame
/// occupies at most `maximumFrameLength` = `maxFrameLength` + the longest delimiter's length bytes, and
/// no more are ever buffered for one; give a reader (a socket's read limit) `maximumFrameLength`. With
/// delimiters of different lengths, a frame ended by a shorter one is refused (its bytes before the
/// delimiter being over `maxFrameLength`) a little below `maximumFrameLength`.
///
/// Errors (after one, close the connection or keep decoding: decoding resumes after the delimiter that
/// ends the too-long frame, as in Netty):
/// - `.frameTooLong(length:maxFrameLength:)` when a frame (delimiter excluded) has more than
///   `maxFrameLength` bytes. Its bytes are discarded as they arrive. With `failFast` (the default) the error
///   is thrown as soon as more than `maxFrameLength` bytes are known to precede the delimiter, `length`
///   being that count; without it, once the delimiter ending the frame arrives, with the full length (or
///   from `decodeLast` when the stream ends first). A too-long frame whose delimiter is already buffered
///   throws at once either way.
/// - `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends after bytes with no delimiter.
public struct DelimiterBasedFrameDecoder: FrameDecoder, Sendable {
    /// The byte sequences that end a frame, in order of preference for frames ending at the same byte.
    public let delimiters: [[UInt8]]
    /// The most bytes a frame may have before its delimiter, delimiter excluded: Netty's `maxFrameLength`
    /// for this decoder. Not the wire maximum; that is `maximumFrameLength`.
    public let maxFrameLength: Int

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `maxFrameLength` + the longest delimiter's length (e.g. + 2 for CR LF).
    public var maximumFrameLength: Int { maxFrameLength.addingSaturating(longestDelimiterLength) }
    /// Whether decoded frames leave out their delimiter (true, the default) or end with it (false).
    public let stripDelimiter: Bool
    /// Whether `.frameTooLong` is thrown as soon as a frame is known to be too long (true, the default) or
    /// only when its delimiter arrives (false).
    public let failFast: Bool

    /// Where the search for one delimiter stands; offsets count from the reader index.
    private enum Progress {
        /// No occurrence starts before this offset.
        case searched(upTo: Int)
        /// The first occurrence not yet consumed starts at this offset.
        case found(at: Int)
    }

    private enum State {
        /// Looking for the end of the next frame.
        case readingFrame
        /// Skipping a too-long frame; `discardedBytes` of it are gone so far.
        case discardingTooLongFrame(discardedBytes: Int)
    }

    private var state = State.readingFrame
    /// One entry per delimiter, in the order of `delimiters`.
    private var progress: [Progress]
    private let longestDelimiterLength: Int

    /// Creates a decoder for frames ended by any of `delimiters`.
    ///
    /// - Parameters:
    ///   - maxFrameLength: the most bytes a frame may have before its delimiter, delimiter excluded
    ///     (Netty's meaning); `maximumFrameLength` adds the longest delimiter.
    ///   - delimiters: byte sequences that end a frame; see the type's documentation for which wins.
    ///   - stripDelimiter: default true.
    ///   - failFast: default true.
    /// - Precondition: `maxFrameLength >= 0`; at least one delimiter and none empty (programmer errors).
    public init(maxFrameLength: Int, delimiters: [[UInt8]], stripDelimiter: Bool = true, failFast: Bool = true) {
        precondition(maxFrameLength >= 0, "maxFrameLength must not be negative: \(maxFrameLength)")
        precondition(!delimiters.isEmpty, "at least one delimiter is needed")
        precondition(delimiters.allSatisfy { !$0.isEmpty }, "a delimiter must not be empty")
        self.maxFrameLength = maxFrameLength
        self.delimiters = delimiters
        self.stripDelimiter = stripDelimiter
        self.failFast = failFast
        progress = Array(repeating: .searched(upTo: 0), count: delimiters.count)
        longestDelimiterLength = delimiters.map(\.count).max() ?? 1
    }

    /// Creates a decoder for frames ended by `delimiter`; see `init(maxFrameLength:delimiters:...)`.
    public init(maxFrameLength: Int, delimiter: [UInt8], stripDelimiter: Bool = true, failFast: Bool = true) {
        self.init(
            maxFrameLength: maxFrameLength, delimiters: [delimiter], stripDelimiter: stripDelimiter,
            failFast: failFast)
    }

    /// CR LF (0D 0A): the delimiter of GCDAsyncSocket's `CRLFData` and of the source articles.
    public static let crlf: [UInt8] = [0x0D, 0x0A]
    /// LF (0A).
    public static let lf: [UInt8] = [0x0A]

    /// Lines ended by CRLF or a lone LF, as Netty's `LineBasedFrameDecoder` and
    /// `Delimiters.lineDelimiter()` cut them: `"a\r\nb\nc\r\n"` is `"a"`, `"b"`, `"c"`.
    public static func lines(maxFrameLength: Int, stripDelimiter: Bool = true) -> DelimiterBasedFrameDecoder {
        DelimiterBasedFrameDecoder(
            maxFrameLength: maxFrameLength, delimiters: [crlf, lf],
            stripDelimiter: stripDelimiter)
    }

    /// Decodes the next frame, or returns nil, consuming nothing, until its delimiter has arrived. While a
    /// too-long frame is being discarded, bytes are consumed and nil returned. Throws as the type's
    /// documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        try decode(&buffer, endOfStream: false)
    }

    /// Like `decode(_:)`, taking the bytes as final; then throws `.truncatedFrame` for bytes left without
    /// a delimiter, or the `.frameTooLong` still owed (without `failFast`) for a frame being discarded.
    public mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        if let frame = try decode(&buffer, endOfStream: true) { return frame }
        if case let .discardingTooLongFrame(discardedBytes) = state {
            let length = discardedBytes + buffer.readableBytes
            consume(buffer.readableBytes, from: &buffer)
            state = .readingFrame
            if !failFast { throw .frameTooLong(length: length, maxFrameLength: maxFrameLength) }
            return nil
        }
        if buffer.readableBytes > 0 { throw .truncatedFrame(bufferedBytes: buffer.readableBytes) }
        return nil
    }

    /// What a search of the buffered bytes found.
    private enum SearchResult {
        /// The frame ends at `index`, with the delimiter at `delimiters[delimiter]`.
        case delimiter(index: Int, delimiter: Int)
        /// No delimiter that more bytes cannot change yet; the first `knownFrameBytes` bytes are surely
        /// part of the frame.
        case pending(knownFrameBytes: Int)
    }

    private mutating func decode(_ buffer: inout FrameBuffer, endOfStream: Bool) throws(FramingError) -> Data? {
        while true {
            switch (findDelimiter(in: buffer, endOfStream: endOfStream), state) {
            case let (.pending(known), .readingFrame):
                guard known > maxFrameLength else { return nil }
                consume(known, from: &buffer)
                state = .discardingTooLongFrame(discardedBytes: known)
                if failFast { throw .frameTooLong(length: known, maxFrameLength: maxFrameLength) }
                return nil
            case let (.pending(known), .discardingTooLongFrame(discardedBytes)):
                consume(known, from: &buffer)
                state = .discardingTooLongFrame(discardedBytes: discardedBytes + known)
                return nil
            case let (.delimiter(index, delimiter), .readingFrame):
                let delimiterLength = delimiters[delimiter].count
                guard index <= maxFrameLength else {
                    consume(index + delimiterLength, from: &buffer)
                    throw .frameTooLong(length: index, maxFrameLength: maxFrameLength)
                }
                let frame = buffer.getData(at: 0, count: stripDelimiter ? index : index + delimiterLength)
                consume(index + delimiterLength, from: &buffer)
                return frame
            case let (.delimiter(index, delimiter), .discardingTooLongFrame(discardedBytes)):
                consume(index + delimiters[delimiter].count, from: &buffer)
                state = .readingFrame
                if !failFast { throw .frameTooLong(length: discardedBytes + index, maxFrameLength: maxFrameLength) }
            // With failFast the too-long frame was reported when it was found; go on with the next one.
            }
        }
    }

    /// Finds the earliest delimiter occurrence that more bytes cannot change, searching each delimiter
    /// only past where its last search ended, and records how far each search went.
    private mutating func findDelimiter(in buffer: FrameBuffer, endOfStream: Bool) -> SearchResult {
        var best: (index: Int, delimiter: Int)?
        for (delimiter, state) in progress.enumerated() {
            guard case let .found(index) = state else { continue }
            if let current = best, current.index <= index { continue }
            best = (index, delimiter)
        }
        for (delimiter, state) in progress.enumerated() {
            guard case let .searched(upTo) = state else { continue }
            // Only an occurrence that would beat the best one so far matters.
            let startLimit = best.map { delimiter < $0.delimiter ? $0.index + 1 : $0.index } ?? .max
            let needle = delimiters[delimiter]
            if let index = buffer.firstIndex(of: needle, from: upTo, startLimit: startLimit) {
                progress[delimiter] = .found(at: index)
                best = (index, delimiter)
            } else {
                let lastCompleteStart = buffer.readableBytes - needle.count
                progress[delimiter] = .searched(upTo: max(upTo, min(startLimit, lastCompleteStart + 1)))
            }
        }
        var known = Int.max
        for case let .searched(upTo) in progress { known = min(known, upTo) }
        guard let best else { return .pending(knownFrameBytes: known) }
        if !endOfStream && delimiters.count > 1 && mayBeBeaten(best, in: buffer) {
            return .pending(knownFrameBytes: min(known, best.index))
        }
        return .delimiter(index: best.index, delimiter: best.delimiter)
    }

    /// Whether another delimiter, still arriving, could start before the best occurrence (or at the same
    /// byte, listed earlier) and so end the frame instead.
    private func mayBeBeaten(_ best: (index: Int, delimiter: Int), in buffer: FrameBuffer) -> Bool {
        for (delimiter, needle) in delimiters.enumerated() where delimiter != best.delimiter {
            let lastStart = delimiter < best.delimiter ? best.index : best.index - 1
            var start = max(0, buffer.readableBytes - needle.count + 1)
            while start <= lastStart {
                if buffer.endsWithPartialMatch(of: needle, at: start) { return true }
                start += 1
            }
        }
        return false
    }

    /// Consumes `total` bytes and moves every delimiter's progress back by as many.
    private mutating func consume(_ total: Int, from buffer: inout FrameBuffer) {
        buffer.moveReaderIndex(forwardBy: total)
        guard total > 0 else { return }
        for delimiter in progress.indices {
            switch progress[delimiter] {
            case let .searched(upTo):
                progress[delimiter] = .searched(upTo: max(0, upTo - total))
            case let .found(index):
                // An occurrence overlapping the consumed bytes is gone; search again from the front.
                progress[delimiter] = index >= total ? .found(at: index - total) : .searched(upTo: 0)
            }
        }
    }
}
