import Foundation
import SocketFraming

/// permessage-deflate (RFC 7692) on one connection's frames, between `WebSocketFrameDecoder` and
/// `WebSocketMessageAssembler` on the way in and before `WebSocketFrameEncoder` on the way out; what
/// ``WebSocketProtocolHandler`` holds once an agreement exists.
///
/// - Out (§6, §7.2.1): a text or binary message is compressed whole into one frame with RSV1 set (which
///   the handler fragments when it is over the frame limit, RSV1 on the first only); control frames are
///   never compressed.
/// - In (§6.1, §7.2.2): a data message whose first frame has RSV1 is inflated frame by frame as its
///   frames arrive (so text is checked as UTF-8 per frame, and a bomb stops at the message limit, 1009);
///   RSV1 on a control frame or a continuation frame fails the connection (1002, §6.1).
/// - Context takeover as agreed: without it the compressor and decompressor are made per message and
///   freed after it (nothing held while idle), with it they keep their zlib state.
///
/// Holds zlib state (two classes that are not thread-safe): used only by the one handler that made it,
/// on its connection's event loop, so a copy of the handler shares it (hence `@unchecked Sendable`).
/// A class, so a handler without permessage-deflate holds one nil reference for it (8 bytes of every
/// idle connection rather than the 41 of the value inline).
final class WebSocketDeflateCodec: @unchecked Sendable {
    /// What was agreed in the handshake.
    let agreement: PerMessageDeflate.Agreement
    private let compressor: PerMessageDeflate.Compressor
    private let decompressor: PerMessageDeflate.Decompressor
    /// Whether the data message being received is compressed (its first frame had RSV1) and not done.
    private var receivingCompressed = false

    /// The codec of `role`'s end under `agreement`, with zlib's default level and memory level (the
    /// memory this costs: docs/BENCHMARKS.md, "permessage-deflate memory per connection").
    init(agreement: PerMessageDeflate.Agreement, role: WebSocketRole) {
        let role: PerMessageDeflate.Role = role == .server ? .server : .client
        self.agreement = agreement
        compressor = PerMessageDeflate.Compressor(agreement: agreement, role: role)
        decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: role)
    }

    /// Whether zlib state is held now (for the idle-memory tests): with context takeover only.
    var holdsContext: (compressor: Bool, decompressor: Bool) { (compressor.holdsContext, decompressor.holdsContext) }

    /// The frame that carries a whole outgoing message of `opcode` (`.text` or `.binary`): its payload
    /// compressed (§7.2.1), RSV1 set, FIN set.
    func frame(_ opcode: WebSocketOpcode, _ payload: Data) -> WebSocketFrame {
        WebSocketFrame(fin: true, reservedBits: .rsv1, opcode: opcode, payload: compressor.compress(payload))
    }

    /// Undoes compression on one incoming frame: the frame with its payload inflated and RSV1 cleared, or
    /// as it came when it is not part of a compressed message.
    ///
    /// - Parameter maxMessageSize: the connection's message limit, in inflated bytes: inflating stops there.
    /// - Throws: `WebSocketProtocolError.reservedBitsSet([rsv1])` for RSV1 on a control or continuation
    ///   frame (§6.1), `.dataFrameInsideMessage` for a data frame inside a compressed message (§5.4),
    ///   `.decompressionFailed` for a payload that does not inflate or inflates past `maxMessageSize`.
    func inflate(_ frame: WebSocketFrame, maxMessageSize: Int) throws(WebSocketProtocolError) -> WebSocketFrame {
        var frame = frame
        switch frame.opcode {
        case .ping, .pong, .close:
            if frame.rsv1 { throw .reservedBitsSet(.rsv1) }
            return frame
        case .continuation:
            if frame.rsv1 { throw .reservedBitsSet(.rsv1) }
            guard receivingCompressed else { return frame }
        case .text, .binary:
            if receivingCompressed { throw .dataFrameInsideMessage(frame.opcode) }
            guard frame.rsv1 else { return frame }
            receivingCompressed = true
        }
        do {
            frame.payload = try decompressor.decompress(fragment: frame.payload, isFinal: frame.fin, maxMessageBytes: maxMessageSize)
        } catch {
            throw .decompressionFailed(error)
        }
        frame.reservedBits.remove(.rsv1)
        if frame.fin { receivingCompressed = false }
        return frame
    }

    /// Whether the frame of `opcode` at the front of the buffer will be inflated (so its raw bytes are not
    /// the message's: the partial UTF-8 check leaves it to the frame's end).
    func isCompressed(_ opcode: WebSocketOpcode, rsv1: Bool) -> Bool {
        opcode == .continuation ? receivingCompressed : rsv1
    }
}
