import CZlib
import Foundation

/// The container around deflate-compressed data (zlib manual, `deflateInit2`'s `windowBits`).
public enum CompressionFormat: Sendable {
    /// zlib: 2-byte header, deflate data, Adler-32 of the plain data (RFC 1950). windowBits 15.
    case zlib
    /// gzip: 10-byte header (no file name, modification time 0), deflate data, CRC-32 and length of the
    /// plain data (RFC 1952). Only one gzip member is read. windowBits 15 + 16.
    case gzip
    /// Raw deflate data, no header or checksum (RFC 1951). windowBits -15.
    case rawDeflate

    /// The `windowBits` argument of `deflateInit2`/`inflateInit2` selecting this format with a 32 KB window.
    var windowBits: Int32 {
        switch self {
        case .zlib: 15
        case .gzip: 15 + 16
        case .rawDeflate: -15
        }
    }
}

/// Whole-buffer compression with zlib (https://zlib.net/manual.html), used for compressed frame bodies.
///
/// Decompression is streamed through a fixed-size chunk, so its memory is bounded by `maxOutputBytes`
/// whatever the input claims: a compression bomb is an error, not an allocation.
public enum Zlib {
    /// Bytes of output produced per `deflate`/`inflate` call.
    static let chunkBytes = 64 * 1024

    /// Compresses `data` into `format` at `level`.
    ///
    /// - Parameters:
    ///   - data: the plain bytes; empty compresses to the format's empty stream.
    ///   - format: the stream's container (see ``CompressionFormat``).
    ///   - level: 0 (store) to 9 (smallest), or `Z_DEFAULT_COMPRESSION` (-1, which zlib treats as 6);
    ///     default -1.
    /// - Returns: the complete compressed stream, header and trailer included.
    /// - Throws: nothing for valid arguments today; the typed throw keeps room for future formats.
    /// - Precondition: `level` is -1...9 (a programmer error otherwise). zlib failing to allocate its state
    ///   traps, as any Swift allocation failure does.
    ///
    /// Calls zlib's `deflateInit2_`, `deflate` and `deflateEnd`.
    public static func compress(
        _ data: Data, format: CompressionFormat = .zlib, level: Int32 = Z_DEFAULT_COMPRESSION
    ) throws(FramingError) -> Data {
        precondition((-1...9).contains(level), "zlib compression level must be -1...9, not \(level)")
        let stream = ZStream()
        let status = deflateInit2_(
            stream.pointer, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { fatalError("deflateInit2: \(stream.describe(status))") }
        defer { deflateEnd(stream.pointer) }

        return data.withUnsafeBytes { input in
            var output = Data()
            var fed = 0
            while true {
                fed += stream.feed(input, from: fed)
                let flush = fed == input.count ? Z_FINISH : Z_NO_FLUSH
                let (status, produced) = stream.run(room: chunkBytes) { deflate($0, flush) }
                output.append(produced)
                // Z_BUF_ERROR only means "no progress this call"; more output room or input follows.
                if status == Z_STREAM_END { return output }
                guard status == Z_OK || status == Z_BUF_ERROR else { fatalError("deflate: \(stream.describe(status))") }
            }
        }
    }

    /// Decompresses the single complete stream `data` holds in `format`.
    ///
    /// - Parameters:
    ///   - data: exactly one complete compressed stream.
    ///   - format: the stream's container (see ``CompressionFormat``).
    ///   - maxOutputBytes: the most decompressed bytes accepted; output is produced in chunks and
    ///     decompression stops as soon as it would exceed this. At least 0.
    /// - Throws: `.decompressedTooLarge(maxBytes: maxOutputBytes)` when the plain data is longer;
    ///   `.decompressionFailed` with zlib's message and code when the data is not valid (bad header,
    ///   checksum, block), when it ends before the stream does, when bytes follow the end of the stream, or
    ///   when it needs a preset dictionary.
    ///
    /// Calls zlib's `inflateInit2_`, `inflate` and `inflateEnd`.
    public static func decompress(
        _ data: Data, format: CompressionFormat = .zlib, maxOutputBytes: Int
    ) throws(FramingError) -> Data {
        precondition(maxOutputBytes >= 0, "maxOutputBytes must not be negative: \(maxOutputBytes)")
        let stream = ZStream()
        let status = inflateInit2_(stream.pointer, format.windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw .decompressionFailed("inflateInit2: \(stream.describe(status))") }
        defer { inflateEnd(stream.pointer) }

        let result = data.withUnsafeBytes { input -> Result<Data, FramingError> in
            var output = Data()
            var fed = 0
            while true {
                fed += stream.feed(input, from: fed)
                // One byte more than allowed, so that too long a stream is noticed, never stored whole.
                let allowance = maxOutputBytes - output.count
                let room = allowance >= chunkBytes ? chunkBytes : allowance + 1
                let (status, produced) = stream.run(room: room) { inflate($0, Z_NO_FLUSH) }
                guard produced.count <= allowance else { return .failure(.decompressedTooLarge(maxBytes: maxOutputBytes)) }
                output.append(produced)
                switch status {
                case Z_STREAM_END:
                    let trailing = stream.unreadInputBytes + (input.count - fed)
                    guard trailing == 0 else {
                        return .failure(.decompressionFailed("\(trailing) bytes follow the end of the compressed stream"))
                    }
                    return .success(output)
                case Z_OK:
                    continue
                case Z_NEED_DICT:
                    return .failure(.decompressionFailed("inflate: a preset dictionary is needed (Z_NEED_DICT 2)"))
                case Z_BUF_ERROR:
                    // Output room was left and all input was given: the stream is cut short.
                    return .failure(.decompressionFailed("compressed data ends before the end of the stream"))
                default:
                    return .failure(.decompressionFailed("inflate: \(stream.describe(status))"))
                }
            }
        }
        return try result.get()
    }
}

/// A heap-allocated `z_stream` and an output chunk. zlib keeps a pointer back to the `z_stream`, so it
/// must not move between calls, which a Swift variable's storage does not promise.
///
/// Its owner calls zlib's `…Init2_` and `…End` (see `Zlib`, and permessage-deflate's `RawZStream`).
final class ZStream {
    let pointer: UnsafeMutablePointer<z_stream>
    /// The output chunk, allocated by the first `run` and freed by `releaseChunk` or `deinit`.
    private var chunk: UnsafeMutablePointer<UInt8>?
    /// The output chunk's size in bytes: the most one `run` produces.
    let chunkBytes: Int

    /// Allocates the `z_stream` (zeroed: zlib's default allocator); the `chunkBytes` output chunk comes
    /// with the first `run`.
    init(chunkBytes: Int = Zlib.chunkBytes) {
        precondition(chunkBytes > 0, "chunkBytes must be positive: \(chunkBytes)")
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        self.chunkBytes = chunkBytes
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
        chunk?.deallocate()
    }

    /// Frees the output chunk until the next `run` (a stream kept between messages holds only zlib's state).
    func releaseChunk() {
        chunk?.deallocate()
        chunk = nil
    }

    /// Input given to zlib and not yet consumed by it.
    var unreadInputBytes: Int { Int(pointer.pointee.avail_in) }

    /// Forgets the input given and not consumed (it belongs to a buffer that is about to go away).
    func discardInput() {
        pointer.pointee.next_in = nil
        pointer.pointee.avail_in = 0
    }

    /// When zlib has consumed all input given so far, gives it the next part of `input` from `offset`;
    /// returns the number of bytes given.
    func feed(_ input: UnsafeRawBufferPointer, from offset: Int) -> Int {
        guard pointer.pointee.avail_in == 0, offset < input.count, let base = input.baseAddress else { return 0 }
        let count = min(input.count - offset, Int(clamping: UInt32.max))
        pointer.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
        pointer.pointee.avail_in = uInt(count)
        return count
    }

    /// Runs `step` (one `deflate` or `inflate` call) with `room` bytes of output space (at most
    /// `chunkBytes`); returns its status and the bytes it produced.
    func run(room: Int, _ step: (UnsafeMutablePointer<z_stream>) -> Int32) -> (Int32, UnsafeBufferPointer<UInt8>) {
        precondition((0...chunkBytes).contains(room), "room \(room) outside the chunk of \(chunkBytes) bytes")
        let chunk = self.chunk ?? .allocate(capacity: chunkBytes)
        self.chunk = chunk
        pointer.pointee.next_out = chunk
        pointer.pointee.avail_out = uInt(room)
        let status = step(pointer)
        let produced = room - Int(pointer.pointee.avail_out)
        pointer.pointee.next_out = nil
        return (status, UnsafeBufferPointer(start: chunk, count: produced))
    }

    /// zlib's message for `status`, if it left one, then the status's name and value.
    func describe(_ status: Int32) -> String {
        let name =
            switch status {
            case Z_STREAM_END: "Z_STREAM_END"
            case Z_NEED_DICT: "Z_NEED_DICT"
            case Z_ERRNO: "Z_ERRNO"
            case Z_STREAM_ERROR: "Z_STREAM_ERROR"
            case Z_DATA_ERROR: "Z_DATA_ERROR"
            case Z_MEM_ERROR: "Z_MEM_ERROR"
            case Z_BUF_ERROR: "Z_BUF_ERROR"
            case Z_VERSION_ERROR: "Z_VERSION_ERROR"
            default: "status"
            }
        guard let message = pointer.pointee.msg else { return "\(name) (\(status))" }
        return "\(String(cString: message)) (\(name) \(status))"
    }
}
