import AsyncSocket
import Foundation

extension TCPConnection {
    /// The frames arriving on this connection, decoded with `decoder`, as an asynchronous sequence. It
    /// ends when the peer closes the connection cleanly between frames; it throws the decoder's
    /// ``FramingError`` for a malformed frame (after yielding every frame before it, and closing the
    /// connection) or ``FramingError/truncatedFrame(bufferedBytes:)`` when the peer closes mid-frame,
    /// and the connection's ``SocketError`` when it drops. Iterate it from one task; ending the
    /// iteration early (or cancelling that task) stops reading but leaves the connection open.
    ///
    /// ```swift
    /// for try await frame in connection.frames(decodedWith: .lengthPrefixed(maxFrameLength: 1 << 20)) { … }
    /// ```
    public func frames<Decoder: FrameDecoder & Sendable>(decodedWith decoder: Decoder) -> AsyncThrowingStream<Decoder.Frame, any Error>
    where Decoder.Frame: Sendable {
        AsyncThrowingStream { continuation in
            let task = Task {
                var reader = FrameReader(decoder: decoder)
                do {
                    while true {
                        while let frame = try reader.nextFrame() { continuation.yield(frame) }
                        let bytes: Data
                        do {
                            bytes = try await read()
                        } catch SocketError.closedByPeer {
                            while let frame = try reader.finish() { continuation.yield(frame) }
                            continuation.finish()
                            return
                        }
                        reader.append(bytes)
                    }
                } catch let error as FramingError {
                    await close()
                    continuation.finish(throwing: error)
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Encodes `message` with `encoder` and writes it; returns when the kernel has the bytes.
    /// - Throws: the encoder's ``FramingError`` (nothing is written then), or the write's error as
    ///   ``write(_:timeout:)`` throws it.
    public func send<Encoder: FrameEncoder>(_ message: Encoder.Message, encodedWith encoder: Encoder, timeout: Duration? = nil) async throws {
        try await write(try encoder.encode(message), timeout: timeout)
    }
}
