import CZlib
import Foundation

extension PerMessageDeflate {
    /// Inflates the payloads of one endpoint's incoming compressed messages (RFC 7692 §7.2.2), never
    /// beyond a caller-given size.
    ///
    /// Each payload gets `00 00 ff ff` appended and is inflated as raw deflate data:
    ///
    /// ```
    /// payload              f2 48 cd c9 c9 07 00
    /// inflated             f2 48 cd c9 c9 07 00 00 00 ff ff  →  48 65 6c 6c 6f ("Hello")
    /// next, context kept   f2 00 11 00 00 00 00 ff ff        →  48 65 6c 6c 6f (§7.2.3.2)
    /// ```
    ///
    /// A message comes whole (``decompress(_:maxMessageBytes:)``) or one frame's payload at a time
    /// (``decompress(fragment:isFinal:maxMessageBytes:)``).
    ///
    /// A bomb (a few KiB of zeros' deflate data standing for gigabytes) stops with
    /// ``DecompressionError/messageTooBig(maxBytes:)`` as soon as the output would pass the limit: the
    /// output buffers never hold more than the limit together, and zlib writes at most one 16 KiB chunk
    /// beside them.
    ///
    /// With context takeover zlib's state (`1 << windowBits` bytes of history plus some 7 KiB) lives as long
    /// as the decompressor; with `noContextTakeover` it is made for each message and freed after it. After
    /// an error the decompressor's history is gone: the connection is to be failed. Not thread-safe: one
    /// decompressor per connection, used by one task or queue at a time.
    public final class Decompressor {
        /// The peer's negotiated window, in window bits 8–15: the history kept.
        public let windowBits: Int
        /// Whether the peer compresses every message afresh, so no history is kept between messages.
        public let noContextTakeover: Bool
        /// The zlib stream kept between messages (context takeover), nil while none is held.
        private var stream: RawZStream?
        /// Inflated bytes of the current message's earlier fragments.
        private var messageBytes = 0
        /// Whether a final block (BFINAL) ended the current message's deflate stream: the rest is ignored.
        private var messageEnded = false
        /// The most bytes the last call's buffer reserved (tests check the bomb bound with it).
        private(set) var lastReservedBytes = 0

        /// Creates a decompressor for a peer compressing with `windowBits` (8...15) window bits, with or
        /// without context takeover.
        ///
        /// - Precondition: `windowBits` is 8...15 (a programmer error otherwise).
        public init(windowBits: Int, noContextTakeover: Bool) {
            precondition(PerMessageDeflate.windowBitsRange.contains(windowBits), "window bits must be 8...15, not \(windowBits)")
            self.windowBits = windowBits
            self.noContextTakeover = noContextTakeover
        }

        /// Creates the decompressor of the messages `role` receives under `agreement` (those its peer sends).
        public convenience init(agreement: Agreement, role: Role) {
            let peer: Role = role == .server ? .client : .server
            self.init(windowBits: agreement.maxWindowBits(sentBy: peer), noContextTakeover: agreement.noContextTakeover(sentBy: peer))
        }

        /// Whether zlib's state is held now: between messages with context takeover, and inside a message
        /// given in fragments.
        public var holdsContext: Bool { stream != nil }

        /// The payload of one whole compressed message (its frames' payloads joined), inflated.
        ///
        /// - Parameters:
        ///   - payload: the message's compressed payload, without the `00 00 ff ff` the sender removed.
        ///   - maxMessageBytes: the most inflated bytes accepted (the connection's message limit), ≥ 0.
        /// - Throws: ``DecompressionError/messageTooBig(maxBytes:)`` (close 1009) once the output would
        ///   exceed `maxMessageBytes`; ``DecompressionError/corruptData(_:)`` (close 1007) for invalid deflate
        ///   data or a payload that does not end on a block boundary. A message whose last block is final
        ///   (BFINAL, §7.2.3.4) ends the stream there: what follows it is ignored and the history restarts.
        public func decompress(_ payload: Data, maxMessageBytes: Int) throws(DecompressionError) -> Data {
            try decompress(fragment: payload, isFinal: true, maxMessageBytes: maxMessageBytes)
        }

        /// One frame's payload of a compressed message, inflated as it arrives, so that the frame layer
        /// need not hold the whole compressed message and can check text (UTF-8) as it comes.
        ///
        /// The fragments of a message, inflated in turn, give the same bytes as their joined payload given
        /// to ``decompress(_:maxMessageBytes:)`` (a fragment may end anywhere, even inside a deflate code).
        /// Only the final fragment gets `00 00 ff ff` appended.
        ///
        /// One difference is zlib's: its inflate checks how far back a match reaches against the history it
        /// keeps (the negotiated window) plus the output of the current call. A peer that breaks its window
        /// promise may so have a message accepted whole and refused (`corruptData`, "invalid distance too
        /// far back") in fragments, or accepted with one cutting and refused with another; what is accepted
        /// is always the same bytes. Data within the window inflates the same however it is cut.
        ///
        /// - Parameters:
        ///   - fragment: one frame's payload (the first frame has RSV1 set, the continuations not, §6.1).
        ///   - isFinal: whether the frame has FIN set: the message ends with it.
        ///   - maxMessageBytes: the most inflated bytes accepted for the whole message, the same for all
        ///     its fragments; the fragments' output together never exceeds it.
        /// - Throws: as ``decompress(_:maxMessageBytes:)``; ``DecompressionError/messageTooBig(maxBytes:)``
        ///   as soon as the message's output so far would pass `maxMessageBytes`.
        public func decompress(fragment: Data, isFinal: Bool, maxMessageBytes: Int) throws(DecompressionError) -> Data {
            precondition(maxMessageBytes >= 0, "maxMessageBytes must not be negative: \(maxMessageBytes)")
            let inflater = stream ?? RawZStream(inflateWindowBits: windowBits)
            stream = nil  // kept again only when this step succeeds
            var sink = BoundedOutput(maxMessageBytes: maxMessageBytes, earlierBytes: messageBytes)
            defer {
                lastReservedBytes = sink.reservedBytes
                inflater.stream.discardInput()  // bytes after a final block, pointing into `fragment`
            }
            do {
                try inflate(fragment, isFinal: isFinal, with: inflater, into: &sink)
            } catch {
                messageBytes = 0
                messageEnded = false
                throw error
            }
            if !isFinal {
                messageBytes += sink.data.count
                stream = inflater
            } else if !noContextTakeover {
                inflater.stream.releaseChunk()
                stream = inflater
            }
            return sink.data
        }

        /// Inflates `fragment`, then, for the final one, the appended `00 00 ff ff`, and checks the message
        /// ends on a block boundary; resets the message's state at its end.
        private func inflate(
            _ fragment: Data, isFinal: Bool, with inflater: RawZStream, into sink: inout BoundedOutput
        ) throws(DecompressionError) {
            if !messageEnded {
                // withUnsafeBytes rethrows untyped errors: the typed error comes out through a Result.
                messageEnded = try fragment.withUnsafeBytes { input in
                    Result { () throws(DecompressionError) in try Self.inflate(input, with: inflater.stream, into: &sink) }
                }.get()
            }
            guard isFinal else { return }
            if !messageEnded {
                messageEnded = try PerMessageDeflate.flushTail.withUnsafeBytes { input in
                    Result { () throws(DecompressionError) in try Self.inflate(input, with: inflater.stream, into: &sink) }
                }.get()
                // After the appended empty stored block zlib waits for the next block's header: data_type
                // has 128 then (zlib manual, inflate: "plus 128 if inflate() returned immediately after
                // decoding an end-of-block code").
                if !messageEnded && inflater.stream.pointer.pointee.data_type & 128 == 0 {
                    throw .corruptData("the message does not end on a deflate block boundary")
                }
            }
            if messageEnded { inflater.reset() }
            messageBytes = 0
            messageEnded = false
        }

        /// Inflates all of `input` into `sink`; returns true when the deflate stream ended (a final block).
        private static func inflate(
            _ input: UnsafeRawBufferPointer, with stream: ZStream, into sink: inout BoundedOutput
        ) throws(DecompressionError) -> Bool {
            var fed = 0
            while true {
                fed += stream.feed(input, from: fed)
                // One byte more than allowed, so that too long a message is noticed, never stored whole.
                let room = sink.allowance >= stream.chunkBytes ? stream.chunkBytes : sink.allowance + 1
                let (status, produced) = stream.run(room: room) { CZlib.inflate($0, Z_SYNC_FLUSH) }
                try sink.append(produced)
                let inputDone = fed == input.count && stream.unreadInputBytes == 0
                switch status {
                case Z_STREAM_END:
                    return true
                case Z_OK where inputDone && produced.count < room:
                    return false
                case Z_OK:
                    continue
                case Z_BUF_ERROR where inputDone:
                    return false  // nothing more to do with the input given so far
                case Z_NEED_DICT:
                    throw .corruptData("inflate: a preset dictionary is needed (Z_NEED_DICT 2)")
                default:
                    throw .corruptData("inflate: \(stream.describe(status))")
                }
            }
        }
    }
}
