import AsyncSocket
import Foundation
import SocketFraming

extension TCPConnection {
    /// The frames arriving on this connection, decoded with `decoder`, as an asynchronous sequence that
    /// reads only when asked: each `next()` is one read of the connection, which decodes in place on
    /// its unread bytes and returns the first whole frame. Between calls nothing is taken from the
    /// connection, so a slow consumer stops the reading (at most ``TCPSocket/maxBufferedReadBytes`` are
    /// buffered, then TCP flow control slows the peer).
    ///
    /// The sequence ends (`nil`) when the peer closes the connection cleanly between frames. It throws
    /// the decoder's ``FramingError`` for a malformed frame (after every frame before it, and the
    /// connection is then closed), ``FramingError/truncatedFrame(bufferedBytes:)`` when the peer closes
    /// mid-frame, and the connection's ``SocketError`` when it drops. The connection buffers up to the
    /// decoder's `maximumFrameLength` bytes for one frame, so a frame of exactly the maximum arrives
    /// however TCP splits it. Ending the iteration early, or cancelling the
    /// task in `next()`, leaves the connection open and the bytes of a partial frame unread: the next
    /// read of the connection returns them.
    ///
    /// ```swift
    /// for try await frame in connection.frames(decodedWith: .lengthPrefixed(maxFrameLength: 1 << 20)) { … }
    /// ```
    public func frames<Decoder: FrameDecoder & Sendable>(decodedWith decoder: Decoder) -> FrameSequence<Decoder>
    where Decoder.Frame: Sendable {
        FrameSequence(connection: self, decoder: SocketFrameDecoder(decoder))
    }

    /// Encodes `message` with `encoder` and writes it; returns when the kernel has the bytes.
    /// - Throws: the encoder's ``FramingError`` (nothing is written then), or the write's error as
    ///   ``write(_:timeout:)`` throws it.
    public func send<Encoder: FrameEncoder>(_ message: Encoder.Message, encodedWith encoder: Encoder, timeout: Duration? = nil) async throws
    {
        try await write(try encoder.encode(message), timeout: timeout)
    }
}

/// The frames of a `TCPConnection`, decoded as they are asked for
/// (`TCPConnection/frames(decodedWith:)`). Iterate it from one task at a time.
public struct FrameSequence<Decoder: FrameDecoder & Sendable>: AsyncSequence, Sendable where Decoder.Frame: Sendable {
    public typealias Element = Decoder.Frame

    let connection: TCPConnection
    let decoder: SocketFrameDecoder<Decoder>

    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Reads the next frame on each ``next()``.
    public struct Iterator: AsyncIteratorProtocol {
        let sequence: FrameSequence
        private var finished = false

        init(sequence: FrameSequence) {
            self.sequence = sequence
        }

        /// The next frame, or nil after the peer closed the connection between frames.
        ///
        /// - Throws: as `TCPConnection/frames(decodedWith:)` says.
        public mutating func next() async throws -> Decoder.Frame? {
            guard !finished else { return nil }
            let frame = FrameSlot<Decoder.Frame>()
            let consumer = sequence.decoder.consumingOneFrame(into: frame)
            do {
                try await sequence.connection.read(consuming: consumer, maxLength: sequence.decoder.maximumFrameLength)
                return frame.value
            } catch SocketError.closedByPeer {
                finished = true
                let left = frame.bytesSeen
                if left > 0 { throw FramingError.truncatedFrame(bufferedBytes: left) }
                return nil
            } catch SocketError.decodingFailed(let failure) {
                finished = true
                throw failure.underlying
            }
        }
    }
}
