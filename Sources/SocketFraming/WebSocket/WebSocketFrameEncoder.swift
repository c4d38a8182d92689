import Foundation

/// Writes WebSocket frames (RFC 6455 §5.2) for one end of a connection.
///
/// The header has the payload length in its minimal encoding (7 bits up to 125, 16 bits up to 65535,
/// else 64 bits, network byte order). A client masks every frame with a fresh random key (RFC 6455 §5.3);
/// a server masks none (§5.1). The frame's own `maskingKey` is ignored: the role decides.
///
///     server, WebSocketFrame(opcode: .text, payload: "Hello"):
///         81 05 48 65 6C 6C 6F
///     client, same frame, key 37 fa 21 3d drawn from the generator:
///         81 85 37 FA 21 3D 7F 9F 4D 51 58
///
/// The encoder refuses what the receiving decoder would: a control frame without FIN or with more than
/// 125 payload bytes (`.fragmentedControlFrame`, `.controlFrameTooLong`). Reserved bits are written as
/// the frame has them: setting them is for an extension that negotiated them.
public struct WebSocketFrameEncoder: Sendable {
    /// Which end this encoder serves: `.client` masks, `.server` does not (RFC 6455 §5.1).
    public let role: WebSocketRole

    /// An encoder for the frames `role` sends.
    public init(role: WebSocketRole) { self.role = role }

    /// Appends the wire bytes of `frame` to `out`; a client's key comes from `SystemRandomNumberGenerator`
    /// (the system's cryptographically secure generator).
    ///
    /// - Throws: `WebSocketProtocolError` for a control frame the RFC forbids; `out` is then left as it was.
    public func encode(_ frame: WebSocketFrame, into out: inout Data) throws(WebSocketProtocolError) {
        var generator = SystemRandomNumberGenerator()
        try encode(frame, into: &out, using: &generator)
    }

    /// Appends the wire bytes of `frame` to `out`, a client's masking key drawn from `generator` (one
    /// `next()` a frame, its low 32 bits in network byte order; tests inject a fixed generator).
    ///
    /// - Throws: `WebSocketProtocolError` for a control frame the RFC forbids; `out` is then left as it was.
    public func encode(
        _ frame: WebSocketFrame, into out: inout Data, using generator: inout some RandomNumberGenerator
    ) throws(WebSocketProtocolError) {
        let length = frame.payload.count
        if frame.opcode.isControl {
            guard frame.fin else { throw .fragmentedControlFrame(frame.opcode) }
            guard length <= 125 else { throw .controlFrameTooLong(length: UInt64(length)) }
        }
        let key = role == .client ? WebSocketMaskingKey.random(using: &generator) : nil
        let first = (frame.fin ? 0x80 : 0) | frame.reservedBits.rawValue | frame.opcode.rawValue
        Self.withHeader(first: first, payloadLength: length, maskingKey: key) { out.append(contentsOf: $0) }
        let payloadStart = out.count
        out.append(frame.payload)
        if let key {
            out.withUnsafeMutableBytes { all in
                key.apply(to: UnsafeMutableRawBufferPointer(rebasing: all[payloadStart...]))
            }
        }
    }

    /// Returns the wire bytes of `frame` (see `encode(_:into:)`).
    public func encode(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Data {
        var out = Data(capacity: 14 + frame.payload.count)
        try encode(frame, into: &out)
        return out
    }

    /// Calls `body` with the header of an unmasked final frame (a server's, RFC 6455 §5.2) of `opcode`
    /// with no reserved bits, carrying `payloadLength` bytes: 2 to 10 bytes on the stack, for a socket
    /// that writes the header and the payload as they are, with no frame `Data` in between.
    package static func withUnmaskedHeader<R>(
        opcode: WebSocketOpcode, payloadLength: Int, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        withHeader(first: 0x80 | opcode.rawValue, payloadLength: payloadLength, maskingKey: nil, body)
    }

    /// Calls `body` with a frame header on the stack (2 to 14 bytes, RFC 6455 §5.2): `first` (FIN,
    /// reserved bits, opcode), the mask bit and the length of `payloadLength` bytes in its fewest bytes
    /// (7 bits, or 126 / 127 and 16 / 64 bits in network byte order), then `maskingKey`'s bytes if given.
    static func withHeader<R>(
        first: UInt8, payloadLength: Int, maskingKey: WebSocketMaskingKey?, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        // A tuple on the stack, not `withUnsafeTemporaryAllocation`: unspecialized (callers in other
        // modules) that went through a `Result` whose type metadata was looked up on every frame.
        let header = WebSocketUnmaskedHeader(first: first, payloadLength: payloadLength, maskBit: maskingKey == nil ? 0 : 0x80)
        var bytes = (header.bytes, UInt32(0))
        return withUnsafeMutableBytes(of: &bytes) { raw in
            var count = header.count
            if let maskingKey {
                for index in 0..<4 { raw[count + index] = maskingKey.byte(index) }
                count += 4
            }
            return body(UnsafeRawBufferPointer(rebasing: raw[..<count]))
        }
    }
}
