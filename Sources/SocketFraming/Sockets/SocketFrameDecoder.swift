import AsyncSocket
import Foundation

/// One connection's decoder for reading frames straight from a ``TCPSocket`` (or ``TCPConnection``):
/// the decoder works in place on the socket's unread bytes, so a frame is copied once, into the value
/// it decodes to. A decoder keeps state between reads (how far it has searched for a delimiter, a
/// frame it is discarding), so give each connection its own.
///
/// ```swift
/// let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20))
/// socket.readFrame(using: frames, withTimeout: 30, tag: 1)
/// // delegate: socket(_:didReadFrame:withTag:) with the body as Data
/// ```
public final class SocketFrameDecoder<Decoder: FrameDecoder & Sendable>: @unchecked Sendable where Decoder.Frame: Sendable {
    // Unchecked Sendable: the decoder runs only on the socket's loop thread, one frame at a time.
    private var decoder: Decoder
    /// The codec's error that ended the connection (the socket reports it as
    /// ``SocketError/badFrame(_:)``), or nil. Set on the loop before the disconnect callback.
    public private(set) var error: FramingError?
    /// The closure TCPSocket calls; made once so reading a frame allocates nothing for it.
    private(set) var decoding: FrameDecoding = { _ in (0, nil) }

    /// Wraps `decoder`; decoding starts from its current state.
    public init(_ decoder: Decoder) {
        self.decoder = decoder
        decoding = { [unowned self] bytes in try decode(bytes) }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> (consumed: Int, frame: (any Sendable)?) {
        do {
            let (frame, consumed) = try FrameBuffer.borrowing(bytes) { (buffer: inout FrameBuffer) throws(FramingError) in
                try decoder.decode(&buffer)
            }
            return (consumed, frame)
        } catch {
            self.error = error
            throw SocketError.badFrame(error.description)
        }
    }
}

extension TCPSocket {
    /// Reads the next frame with `decoder` (GCDAsyncSocket's read requests, for whole frames): completes
    /// with ``TCPSocketDelegate/socket(_:didReadFrame:withTag:)`` carrying a `Decoder.Frame`, in order
    /// with the socket's other reads. However the bytes arrive (split, glued), each frame comes whole.
    /// A malformed frame (see ``FramingError``) ends the connection after the frames before it are
    /// delivered: the disconnect error is ``SocketError/badFrame(_:)`` and `decoder.error` has the
    /// codec's own error.
    ///
    /// - Parameters:
    ///   - timeout: seconds from when this read becomes the current one; negative means none.
    ///   - maxLength: the most bytes a frame may occupy on the wire; 0 (default) means no limit beyond
    ///     ``TCPSocket/maxBufferedReadBytes`` (1 MiB). Give the decoder's maximum frame length to read
    ///     larger frames. More bytes holding no whole frame end the connection with
    ///     ``SocketError/readMaxedOut(maxLength:)``.
    ///   - tag: handed back in the callback.
    public func readFrame<Decoder>(using decoder: SocketFrameDecoder<Decoder>, withTimeout timeout: TimeInterval, maxLength: UInt = 0, tag: Int) {
        readFrame(decodingWith: decoder.decoding, withTimeout: timeout, maxLength: maxLength, tag: tag)
    }

    /// Encodes `message` with `encoder` and queues the bytes as one write (see
    /// ``write(_:withTimeout:tag:)``).
    /// - Throws: the encoder's ``FramingError`` (a message too long for the length field, say); nothing
    ///   is queued then.
    public func writeFrame<Encoder: FrameEncoder>(_ message: Encoder.Message, using encoder: Encoder, withTimeout timeout: TimeInterval, tag: Int) throws(FramingError) {
        write(try encoder.encode(message), withTimeout: timeout, tag: tag)
    }
}
