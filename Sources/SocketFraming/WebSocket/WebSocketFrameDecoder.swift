import Foundation

/// Cuts WebSocket frames (RFC 6455 §5) off the front of a `FrameBuffer`, checking every rule of the frame
/// layer, and unmasks their payloads.
///
/// Bytes may arrive cut anywhere (inside the header, the extended length, the masking key, the payload):
/// `decode(_:)` returns nil, consuming nothing, until a whole frame is readable. The RFC's examples (§5.7):
///
///     reads:   | 81 05 48 65 | 6C 6C 6F 01 03 48 65 6C | 80 02 6C 6F |
///     frames:       text fin "Hello",   text "Hel",        continuation fin "lo"
///
///     a client's masked "Hello" (key 37 fa 21 3d), as a server receives it:
///     reads:   | 81 85 37 FA | 21 3D 7F 9F 4D 51 58 |
///     frames:              text fin "Hello" (payload unmasked, maskingKey 37 fa 21 3d)
///
/// It has the shape of a `FrameDecoder` (``maximumFrameLength``, ``decode(_:)``, ``decodeLast(_:)``, the
/// same contract) but throws its own typed `WebSocketProtocolError`, whose `closeCode` is what to fail
/// the connection with. Rules, each checked as soon as the bytes it depends on have arrived:
/// - opcode not reserved (§5.2); reserved bits only those in ``allowedReservedBits`` (§5.2);
/// - masking by ``role``: a server refuses unmasked frames, a client masked ones (§5.1);
/// - lengths in their minimal encoding, a 64-bit length's top bit clear (§5.2);
/// - control frames: FIN set, at most 125 payload bytes (§5.5);
/// - payload at most ``maxFrameSize`` bytes: refused from the header, before any payload is buffered (1009).
///
/// Message-level rules (fragment order, UTF-8, message size) are `WebSocketMessageAssembler`'s.
public struct WebSocketFrameDecoder: Sendable {
    /// The default ``maxFrameSize``: 16 MiB (16,777,216 bytes), the library default.
    public static let defaultMaxFrameSize = 16 * 1024 * 1024

    /// Which end this decoder serves; it decides the masking rule (RFC 6455 §5.1).
    public let role: WebSocketRole
    /// The most payload bytes one frame may carry, header not counted; a longer frame throws
    /// `.frameTooLarge` (close code 1009) as soon as its length has been read. Default 16 MiB.
    public let maxFrameSize: Int
    /// The reserved bits a negotiated extension claims (`.rsv1` for permessage-deflate, RFC 7692 §6);
    /// any other set bit throws `.reservedBitsSet`. Default none.
    public let allowedReservedBits: WebSocketReservedBits

    /// The most bytes one frame may occupy on the wire, in the sense of `FrameDecoder.maximumFrameLength`:
    /// ``maxFrameSize`` plus the longest header a frame of that size has (2 bytes, the extended length
    /// its minimal encoding needs, and 4 for a masking key when the role receives masked frames).
    public var maximumFrameLength: Int {
        let header = 2 + WebSocketFrameHeader.extendedLengthBytes(forPayloadLength: maxFrameSize) + (role == .server ? 4 : 0)
        return maxFrameSize.addingSaturating(header)
    }

    /// A decoder for the frames `role` receives.
    ///
    /// - Precondition: `maxFrameSize >= 125`, so that every control frame fits (a programmer error).
    public init(
        role: WebSocketRole, maxFrameSize: Int = WebSocketFrameDecoder.defaultMaxFrameSize,
        allowedReservedBits: WebSocketReservedBits = []
    ) {
        precondition(maxFrameSize >= 125, "maxFrameSize must be at least 125 bytes, not \(maxFrameSize)")
        self.role = role
        self.maxFrameSize = maxFrameSize
        self.allowedReservedBits = allowedReservedBits
    }

    /// Decodes the next frame, consuming exactly its bytes, with its payload unmasked; or returns nil,
    /// consuming nothing, until all of it has arrived.
    ///
    /// - Throws: `WebSocketProtocolError` as the type's documentation lists; nothing is consumed.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(WebSocketProtocolError) -> WebSocketFrame? {
        let readable = buffer.readableBytes
        guard let header = try parseHeader(buffer), readable - header.headerLength >= header.payloadLength else { return nil }
        buffer.moveReaderIndex(forwardBy: header.headerLength)
        let payload = Self.readPayload(count: header.payloadLength, maskingKey: header.maskingKey, from: &buffer)
        return WebSocketFrame(
            fin: header.fin, reservedBits: header.reservedBits, opcode: header.opcode, maskingKey: header.maskingKey,
            payload: payload)
    }

    /// The header at the front of `buffer` checked against this decoder's rules, or nil until it has all
    /// arrived. Through a non-generic outcome rather than a `Result`: a `Result` made inside the generic
    /// `withUnsafeReadableBytes` had its type metadata looked up at run time on every frame.
    private func parseHeader(_ buffer: FrameBuffer) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        let outcome = buffer.withUnsafeReadableBytes { bytes in HeaderOutcome(parsing: bytes, rules: rules) }
        switch outcome {
        case .header(let header): return header
        case .incomplete: return nil
        case .refused(let error): throw error
        }
    }

    /// What reading a header gave (``parseHeader(_:)``).
    private enum HeaderOutcome {
        case header(WebSocketFrameHeader)
        case incomplete
        case refused(WebSocketProtocolError)

        init(parsing bytes: UnsafeRawBufferPointer, rules: WebSocketFrameHeader.Rules) {
            do throws(WebSocketProtocolError) {
                self = try WebSocketFrameHeader.parse(bytes, rules: rules).map { .header($0) } ?? .incomplete
            } catch {
                self = .refused(error)
            }
        }
    }

    /// The rules every header is checked against.
    private var rules: WebSocketFrameHeader.Rules {
        WebSocketFrameHeader.Rules(role: role, allowedReservedBits: allowedReservedBits, maxFrameSize: maxFrameSize)
    }

    /// The header of the frame at the front of `bytes` when all of the frame has arrived and its header
    /// breaks no rule; nil otherwise (not all arrived, or refused: ``decode(_:)`` says why). Consumes
    /// nothing: for a reader that takes whole frames in place, without a `WebSocketFrame` and its `Data`.
    package func wholeFrameHeader(in bytes: UnsafeRawBufferPointer) -> WebSocketFrameHeader? {
        if bytes.count >= 2 {
            // The usual frame read at once: final text or binary, no reserved bits, a 7-bit length (so
            // within every `maxFrameSize`, at least 125), masked as the role receives them.
            let first = bytes[0], second = bytes[1]
            let opcode = first & 0x0F, length = Int(second & 0x7F), masked = second & 0x80 != 0
            if first & 0xF0 == 0x80, opcode == 0x1 || opcode == 0x2, length <= 125, masked == (role == .server) {
                let headerLength = masked ? 6 : 2
                guard bytes.count - headerLength >= length else { return nil }
                let key =
                    masked ? WebSocketMaskingKey(rawValue: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt32.self))) : nil
                return WebSocketFrameHeader(
                    fin: true, reservedBits: [], opcode: opcode == 0x1 ? .text : .binary, maskingKey: key,
                    payloadLength: length, headerLength: headerLength)
            }
        }
        guard case .header(let header) = HeaderOutcome(parsing: bytes, rules: rules),
            bytes.count - header.headerLength >= header.payloadLength
        else { return nil }
        return header
    }

    /// Payloads of more bytes than this are unmasked as they are copied out of the buffer (one pass, into
    /// storage not zeroed first); shorter ones are copied (inline in the `Data` up to 14 bytes) and then
    /// unmasked in place.
    static let unmaskWhileCopyingAbove = 64

    /// Takes the next `count` bytes of `buffer` (all readable) as a payload, unmasked with `maskingKey`.
    private static func readPayload(count: Int, maskingKey: WebSocketMaskingKey?, from buffer: inout FrameBuffer) -> Data {
        guard let key = maskingKey, count > unmaskWhileCopyingAbove else {
            var payload = buffer.readData(count: count) ?? Data()
            if let key = maskingKey { payload.withUnsafeMutableBytes { key.apply(to: $0) } }
            return payload
        }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        buffer.withUnsafeReadableBytes { key.apply(from: UnsafeRawBufferPointer(rebasing: $0[..<count]), to: storage) }
        buffer.moveReaderIndex(forwardBy: count)
        return Data(bytesNoCopy: storage, count: count, deallocator: .custom { bytes, _ in bytes.deallocate() })
    }

    /// The frame at the front of `buffer` whose header has arrived whole but whose payload has not: its
    /// header fields, and the payload bytes readable so far from `payloadOffset` on, unmasked (the
    /// frame's `payload`; empty when `payloadOffset` is past them: the header alone); nil while the
    /// header is incomplete, or when the whole frame is readable (then ``decode(_:)`` takes it).
    /// Consumes nothing.
    ///
    /// For checking a text frame's UTF-8 before its end has arrived (RFC 6455 §8.1, fail fast): a caller
    /// that has looked at the first `payloadOffset` bytes already asks only for the bytes after them.
    ///
    /// - Returns: the partial frame and the payload length its header announces, in bytes.
    /// - Throws: `WebSocketProtocolError` for a header ``decode(_:)`` refuses.
    public func partialFrame(
        in buffer: FrameBuffer, payloadOffset: Int = 0
    ) throws(WebSocketProtocolError) -> (frame: WebSocketFrame, payloadLength: Int)? {
        guard let header = try parseHeader(buffer) else { return nil }
        let available = buffer.readableBytes - header.headerLength
        guard available < header.payloadLength else { return nil }
        let start = min(max(payloadOffset, 0), available)
        var payload = buffer.getData(at: header.headerLength + start, count: available - start) ?? Data()
        if let key = header.maskingKey {
            payload.withUnsafeMutableBytes { key.apply(to: $0, offset: start) }
        }
        let frame = WebSocketFrame(
            fin: header.fin, reservedBits: header.reservedBits, opcode: header.opcode, maskingKey: header.maskingKey,
            payload: payload)
        return (frame, header.payloadLength)
    }

    /// Decodes one frame after the stream has ended: ``decode(_:)``, then `.truncatedFrame` (close code
    /// 1006, not sent) if it returned nil while bytes remain.
    public mutating func decodeLast(_ buffer: inout FrameBuffer) throws(WebSocketProtocolError) -> WebSocketFrame? {
        if let frame = try decode(&buffer) { return frame }
        if buffer.readableBytes > 0 { throw .truncatedFrame(bufferedBytes: buffer.readableBytes) }
        return nil
    }
}
