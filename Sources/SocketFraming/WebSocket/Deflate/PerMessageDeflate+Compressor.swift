import CZlib
import Foundation

extension PerMessageDeflate {
    /// Compresses the payloads of one endpoint's outgoing messages (RFC 7692 §7.2.1).
    ///
    /// Each message is deflated as raw deflate data, flushed with `Z_SYNC_FLUSH` (which ends it with an
    /// empty stored block, `00 00 ff ff` after the block header), and those 4 bytes are removed:
    ///
    /// ```
    /// "Hello"                       48 65 6c 6c 6f
    /// deflate(Z_SYNC_FLUSH)         f2 48 cd c9 c9 07 00 00 00 ff ff
    /// compress(_:) returns          f2 48 cd c9 c9 07 00
    /// "Hello" again, context kept   f2 00 11 00 00                    (§7.2.3.2: refers back 5 bytes)
    /// empty message                 00                                (§7.2.3.6)
    /// ```
    ///
    /// With context takeover the zlib state (see ``ServerConfiguration`` for its size) lives as long as the
    /// compressor; with `noContextTakeover` it is made for each message and freed after it, so an idle
    /// compressor holds no zlib memory. Not thread-safe: one compressor per connection, used by one task
    /// or queue at a time.
    public final class Compressor {
        /// The window the compressor may refer back into, in window bits 8–15 (8 compresses with 9, which
        /// still never refers back more than 256 bytes; see ``PerMessageDeflate``).
        public let windowBits: Int
        /// Whether every message is compressed afresh, without the previous messages' history.
        public let noContextTakeover: Bool
        /// zlib's compression level: 0 (store) to 9, or -1 (`Z_DEFAULT_COMPRESSION`, i.e. 6).
        public let level: Int32
        /// zlib's `memLevel`, 1–9: its hash table and literal buffer take `1 << (memoryLevel + 9)` bytes.
        public let memoryLevel: Int32
        /// The zlib stream kept between messages (context takeover), nil while none is held.
        private var stream: RawZStream?

        /// Creates a compressor.
        ///
        /// - Parameters:
        ///   - windowBits: the negotiated window of this endpoint's messages, 8...15.
        ///   - noContextTakeover: compress each message afresh (and free zlib's state between messages).
        ///   - level: -1...9; default -1 (zlib's 6).
        ///   - memoryLevel: 1...9; default 8 (zlib's default).
        /// - Precondition: the arguments are in range (programmer errors otherwise).
        public init(windowBits: Int, noContextTakeover: Bool, level: Int32 = Z_DEFAULT_COMPRESSION, memoryLevel: Int32 = 8) {
            precondition(PerMessageDeflate.windowBitsRange.contains(windowBits), "window bits must be 8...15, not \(windowBits)")
            precondition((-1...9).contains(level), "zlib compression level must be -1...9, not \(level)")
            precondition((1...9).contains(memoryLevel), "zlib memLevel must be 1...9, not \(memoryLevel)")
            self.windowBits = windowBits
            self.noContextTakeover = noContextTakeover
            self.level = level
            self.memoryLevel = memoryLevel
        }

        /// Creates the compressor of `role`'s messages under `agreement`.
        public convenience init(agreement: Agreement, role: Role, level: Int32 = Z_DEFAULT_COMPRESSION, memoryLevel: Int32 = 8) {
            self.init(
                windowBits: agreement.maxWindowBits(sentBy: role), noContextTakeover: agreement.noContextTakeover(sentBy: role),
                level: level, memoryLevel: memoryLevel)
        }

        /// Whether zlib's state is held now: only between messages with context takeover.
        public var holdsContext: Bool { stream != nil }

        /// The compressed payload of one whole message, to send with RSV1 set on its first frame.
        ///
        /// - Parameter message: the message's payload; empty gives the single byte `00` (§7.2.3.6).
        /// - Returns: the deflate data without the final `00 00 ff ff` (§7.2.1).
        public func compress(_ message: Data) -> Data {
            let deflater = stream ?? RawZStream(deflateWindowBits: windowBits, level: level, memoryLevel: memoryLevel)
            var output = Self.deflate(message, with: deflater.stream)
            if noContextTakeover {
                stream = nil
            } else {
                deflater.stream.releaseChunk()
                stream = deflater
            }
            // zlib writes nothing for a flush right after a flush (an empty message with context kept):
            // the empty stored block it would have written, less its last 4 bytes, is one zero byte.
            if output.isEmpty { return Data([0x00]) }
            guard output.count >= 4, output.suffix(4).elementsEqual(PerMessageDeflate.flushTail) else {
                fatalError("deflate(Z_SYNC_FLUSH) did not end with 00 00 ff ff: \(output.suffix(8).map { $0 })")
            }
            output.removeLast(4)
            return output
        }

        /// Deflates all of `message` and flushes with `Z_SYNC_FLUSH`; returns everything zlib wrote.
        private static func deflate(_ message: Data, with stream: ZStream) -> Data {
            message.withUnsafeBytes { input in
                var output = Data()
                var fed = 0
                while true {
                    fed += stream.feed(input, from: fed)
                    let flush = fed == input.count ? Z_SYNC_FLUSH : Z_NO_FLUSH
                    let room = stream.chunkBytes
                    let (status, produced) = stream.run(room: room) { CZlib.deflate($0, flush) }
                    output.append(produced)
                    // Z_BUF_ERROR only means "no progress this call" (a repeated flush, or room needed).
                    guard status == Z_OK || status == Z_BUF_ERROR else { fatalError("deflate: \(stream.describe(status))") }
                    // The flush is complete when zlib leaves output room unused (zlib manual, Z_SYNC_FLUSH).
                    if flush == Z_SYNC_FLUSH && stream.unreadInputBytes == 0 && produced.count < room { return output }
                }
            }
        }
    }
}
