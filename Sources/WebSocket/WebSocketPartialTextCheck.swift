import Foundation
import SocketFraming

/// UTF-8 fail-fast inside a frame (RFC 6455 §8.1; Autobahn case group 6.4): the bytes that have arrived
/// of a text frame (or of a text message's continuation frame) whose payload has not all arrived are
/// unmasked and checked without being consumed, each byte once, from where the last check stopped.
///
///     a server reads:  | 81 8A 00 00 00 00 CE BA E1 BD B9 | (the rest never comes)
///     checked:                             CE BA E1 BD B9   valid so far: wait
///     a server reads:  | 81 8A 00 00 00 00 CE BA F8 …     |
///     checked:                             CE BA F8         F8 cannot be UTF-8: 1007 at once
///
/// The state belongs to the frame at the front of the buffer: when that frame has been decoded whole,
/// ``WebSocketProtocolHandler`` hands ``checkedText`` to the assembler (which checks only the bytes after
/// those) and starts a new check. Compressed frames (permessage-deflate) wait for
/// their end: their raw bytes are not text (they are checked as each frame is inflated).
struct WebSocketPartialTextCheck: Sendable {
    /// The validator after the frame's first `checked` payload bytes, and how many bytes of the message
    /// came before the frame; nil until a text frame has been looked at.
    private var state: (validator: UTF8Validator, messageOffset: Int, checked: Int)?

    /// The validator and how many payload bytes of the front frame it has checked, for the assembler to
    /// go on from when that frame has been decoded whole; nil when none were checked.
    var checkedText: (validator: UTF8Validator, count: Int)? { state.map { ($0.validator, $0.checked) } }

    /// Checks the newly arrived bytes of the partial frame at the front of `buffer`, if it is text.
    /// - Throws: `WebSocketProtocolError.invalidUTF8` (offset from the message's start) for the first
    ///   invalid byte; a header `decoder` refuses.
    mutating func check(
        _ buffer: FrameBuffer, decoder: WebSocketFrameDecoder, assembler: WebSocketMessageAssembler,
        deflate: WebSocketDeflateCodec?
    ) throws(WebSocketProtocolError) {
        // The header alone first (an offset past the payload copies nothing): a binary frame's bytes are
        // never copied.
        guard let (header, _) = try decoder.partialFrame(in: buffer, payloadOffset: .max),
            header.opcode == .text || header.opcode == .continuation,
            deflate?.isCompressed(header.opcode, rsv1: header.rsv1) != true
        else { return }
        if state == nil {
            guard let (validator, offset) = assembler.textValidator(forFrameWith: header.opcode) else { return }
            state = (validator, offset, 0)
        }
        guard var current = state, let (frame, _) = try decoder.partialFrame(in: buffer, payloadOffset: current.checked) else {
            return
        }
        if let invalid = current.validator.validate(frame.payload) {
            throw .invalidUTF8(offset: current.messageOffset + current.checked + invalid)
        }
        current.checked += frame.payload.count
        state = current
    }
}
