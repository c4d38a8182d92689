/// A server's frame as the client reads it: its header's fields (RFC 6455 §5.2).
struct ServerFrame: Equatable {
    /// The opcode: 0x0 continuation, 0x1 text, 0x2 binary, 0x8 close, 0x9 ping, 0xA pong.
    var opcode: UInt8
    /// FIN: the last frame of its message.
    var fin: Bool
    /// RSV1: a compressed message's first frame (permessage-deflate, RFC 7692 §6).
    var compressed: Bool
    /// Payload bytes.
    var length: Int
}

/// A server frame that breaks RFC 6455 §5.2 for a client: masked, RSV2 or RSV3 set, a 64-bit length
/// with its top bit set, or a length over the reader's bound.
struct ServerFrameError: Error, CustomStringConvertible, Equatable {
    let description: String
}

/// Splits the bytes a client reads into the server's frames (RFC 6455 §5.2), without copying payloads:
/// each payload is handed on in the pieces it arrived in. A value, used on one thread.
struct WebSocketEchoReader {
    /// The largest payload accepted: 64 MiB, the library's message limit.
    static let maxLength = 64 << 20
    private var header: [UInt8] = []
    private var frame: ServerFrame?
    private var left = 0

    init() { header.reserveCapacity(14) }

    /// Whether a frame's header or payload is partly read.
    var isInsideFrame: Bool { frame != nil || !header.isEmpty }

    /// Reads `bytes`, calling `body` with each frame, a piece of its payload (possibly empty) and whether
    /// the piece ends the frame. A zero-length frame gets one call with an empty piece.
    /// - Throws: ``ServerFrameError`` for a frame a server may not send; whatever `body` throws.
    mutating func consume(
        _ bytes: UnsafeRawBufferPointer, _ body: (ServerFrame, UnsafeRawBufferPointer, _ endsFrame: Bool) throws -> Void
    ) throws {
        var offset = 0
        while offset < bytes.count || (frame != nil && left == 0) {
            if let current = frame {
                let take = min(left, bytes.count - offset)
                left -= take
                let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take])
                offset += take
                if left == 0 { frame = nil }
                try body(current, piece, left == 0)
                continue
            }
            if header.isEmpty, bytes.count - offset >= 2, bytes[offset + 1] < 126 {
                // A whole 2-byte header (unmasked, 7-bit length), the usual case: read in place.
                try startFrame(first: bytes[offset], length: Int(bytes[offset + 1]))
                offset += 2
                continue
            }
            header.append(bytes[offset])
            offset += 1
            guard let needed = Self.headerLength(header), header.count == needed else { continue }
            try startFrame()
        }
    }

    /// The whole header's length once its first 2 bytes are known (2, 4 or 10, plus 4 when masked).
    private static func headerLength(_ header: [UInt8]) -> Int? {
        guard header.count >= 2 else { return nil }
        let length7 = header[1] & 0x7F
        return 2 + (length7 == 126 ? 2 : length7 == 127 ? 8 : 0) + (header[1] & 0x80 != 0 ? 4 : 0)
    }

    private mutating func startFrame() throws {
        defer { header.removeAll(keepingCapacity: true) }
        guard header[1] & 0x80 == 0 else { throw ServerFrameError(description: "a masked frame from the server (RFC 6455 §5.1)") }
        var length = UInt64(header[1] & 0x7F)
        if length == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
        } else if length == 127 {
            length = header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard length <= UInt64(Self.maxLength) else {
            throw ServerFrameError(description: "a frame of \(length) bytes, over \(Self.maxLength)")
        }
        try startFrame(first: header[0], length: Int(length))
    }

    /// Starts the frame whose header's first byte is `first` and whose payload is `length` bytes (within
    /// ``maxLength``, unmasked).
    private mutating func startFrame(first: UInt8, length: Int) throws {
        guard first & 0x30 == 0 else { throw ServerFrameError(description: "RSV2 or RSV3 set (RFC 6455 §5.2)") }
        frame = ServerFrame(opcode: first & 0x0F, fin: first & 0x80 != 0, compressed: first & 0x40 != 0, length: length)
        left = length
    }
}
