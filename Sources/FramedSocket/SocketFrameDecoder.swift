import AsyncSocket
import SocketFraming

/// One connection's frame decoder, working in place on the socket's unread bytes: a frame is copied
/// once, into the value the decoder makes of it. A decoder keeps state between reads (how far it has
/// searched for a delimiter, a frame it is discarding), so give each connection its own.
///
/// ```swift
/// let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20))
/// socket.readFrames(using: frames) { body in … }   // every frame, on the socket's loop thread
/// ```
///
/// Threading: used only on the socket's event-loop thread, one frame at a time (hence unchecked
/// `Sendable`).
public final class SocketFrameDecoder<Decoder: FrameDecoder & Sendable>: @unchecked Sendable where Decoder.Frame: Sendable {
    private var decoder: Decoder
    /// The decoder's error after frames it had already handed on in the same call: thrown at the
    /// next call, so the frames before the bad bytes count as consumed.
    var pendingError: FramingError?

    /// The decoder's `FrameDecoder/maximumFrameLength`: the most bytes the socket buffers for one frame.
    public let maximumFrameLength: Int

    /// Wraps `decoder`; decoding starts from its current state.
    public init(_ decoder: Decoder) {
        self.decoder = decoder
        self.maximumFrameLength = decoder.maximumFrameLength
    }

    /// Decodes the first frame of `bytes`, in place: the frame (or nil when more bytes are needed) and
    /// how many bytes the decoder consumed (it may consume bytes without a frame, such as a too-long
    /// frame it discards).
    func decode(_ bytes: UnsafeRawBufferPointer) throws(FramingError) -> (frame: Decoder.Frame?, consumed: Int) {
        let (frame, consumed) = try FrameBuffer.borrowing(bytes) { (buffer: inout FrameBuffer) throws(FramingError) in
            try decoder.decode(&buffer)
        }
        return (frame, consumed)
    }

    /// A consumer for one read that ends with the first frame, which it leaves in `slot` (with how
    /// many unread bytes it was last shown, for a stream that ends mid-frame). One slot per read, so
    /// nothing is shared between reads: the read's completion hands the slot over.
    func consumingOneFrame(into slot: FrameSlot<Decoder.Frame>) -> ByteConsumer {
        return { [self] bytes in
            slot.bytesSeen = bytes.count
            let (frame, consumed) = try decode(bytes)
            guard let frame else { return .needMoreData(consumed: consumed) }
            slot.value = frame
            return .complete(consumed: consumed)
        }
    }
}
