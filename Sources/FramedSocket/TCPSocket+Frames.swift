import AsyncSocket
import Foundation
import SocketFraming

extension TCPSocket {
    /// Reads every frame for the rest of the connection with `decoder` and hands each to `onFrame` (with
    /// this socket, so the handler need not capture it) on the socket's event-loop thread, in order, as
    /// soon as it is whole: one read, queued behind the
    /// socket's other reads, that stays the current read until the connection ends (or ``pauseFrames``
    /// says so). However the bytes arrive (split, glued), each frame comes whole.
    ///
    /// A malformed frame ends the connection after the frames before it: the delegate's
    /// ``TCPSocketDelegate/socketDidDisconnect(_:withError:)`` gets ``SocketError/decodingFailed(_:)``,
    /// whose `underlying` is the decoder's ``FramingError``. The socket buffers up to the decoder's
    /// `maximumFrameLength` bytes (at least ``TCPSocket/maxBufferedReadBytes``) for one frame, so a
    /// frame of exactly the maximum arrives however TCP splits it, and the decoder refuses a longer one
    /// with its own error as soon as its header says so.
    ///
    /// - Parameters:
    ///   - pauseFrames: asked with this socket before each frame, on the loop thread; `true` ends this
    ///     read, leaving the rest of the bytes buffered (reading from the kernel stops at 1 MiB, so TCP
    ///     flow control slows the peer); call this method again to resume. A frame handler that
    ///     disconnects the socket ends the read the same way.
    ///   - onUnfinishedFrame: called on the loop thread, after the frames of each arrival have been
    ///     handed on, when bytes of an unfinished frame are left buffered, with how many (at least 1):
    ///     for a deadline on finishing a started frame (slowloris). Not called when the arrival left
    ///     nothing unfinished, or when the read was paused or the socket disconnected first. Default
    ///     `nil`.
    ///   - onDecodingError: when given, a malformed frame does not end the connection: after the frames
    ///     before it, this read ends (as a pause does) with the bad bytes unread, and `onDecodingError`
    ///     gets the decoder's ``FramingError`` on the loop thread; it decides what follows (typically
    ///     writes a last message saying why, then ``TCPSocket/disconnectAfterWriting()``). Default `nil`:
    ///     the connection ends with ``SocketError/decodingFailed(_:)`` as described above.
    public func readFrames<Decoder>(
        using decoder: SocketFrameDecoder<Decoder>,
        pauseFrames: @escaping (TCPSocket) -> Bool = { _ in false },
        onUnfinishedFrame: ((TCPSocket, Int) -> Void)? = nil,
        onDecodingError: ((TCPSocket, FramingError) -> Void)? = nil,
        onFrame: @escaping (TCPSocket, Decoder.Frame) -> Void
    ) {
        let frames = DecodedFrameRead(
            socket: self, decoder: decoder, pauseFrames: pauseFrames,
            onUnfinishedFrame: onUnfinishedFrame, onDecodingError: onDecodingError, onFrame: onFrame)
        consume({ try frames.consume($0) }, maxLength: decoder.maximumFrameLength)
    }

    /// Reads one frame with `decoder` and hands it to `completion` on the socket's event-loop thread, in
    /// order with the socket's other reads; a read that ends unfinished gets the error that ended it, and
    /// one queued when the socket is not connected (or connecting) gets ``SocketError/notConnected``, as
    /// a delegate read does (the bytes left unread went to `socketWillDisconnect`).
    ///
    /// - Parameters:
    ///   - timeout: seconds from when this read becomes the current one; negative means none. On expiry
    ///     the connection ends with ``SocketError/readTimeout(tag:)`` (no extension is asked for).
    ///   - tag: the tag of ``SocketError/readTimeout(tag:)``.
    public func readFrame<Decoder>(
        using decoder: SocketFrameDecoder<Decoder>,
        withTimeout timeout: TimeInterval,
        tag: Int = 0,
        completion: @escaping @Sendable (Result<Decoder.Frame, SocketError>) -> Void
    ) {
        let frame = FrameSlot<Decoder.Frame>()
        read(
            .consuming(decoder.consumingOneFrame(into: frame), maxLength: decoder.maximumFrameLength),
            timeout: timeout, tag: tag
        ) { result in
            switch result {
            case .success:
                if let value = frame.value { completion(.success(value)) }
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// Hands every whole frame, as `slicer` finds them, to `onFrame` (with this socket) as a borrowed view of its bytes
    /// inside the socket's read buffer (valid only during the call; copy what you keep): no copy and no
    /// allocation per frame. Runs on the socket's event-loop thread for the rest of the connection (or
    /// until `pauseFrames` says so). Errors and the frame limit (the slicer's `maximumFrameLength`) as
    /// ``readFrames(using:pauseFrames:onFrame:)``.
    public func readFrames(
        slicedBy slicer: some FrameSlicer,
        pauseFrames: @escaping (TCPSocket) -> Bool = { _ in false },
        onFrame: @escaping (TCPSocket, UnsafeRawBufferPointer) -> Void
    ) {
        let frames = SlicedFrameRead(socket: self, slicer: slicer, pauseFrames: pauseFrames, onFrames: onFrame)
        consume({ try frames.consumeFrames($0) }, maxLength: slicer.maximumFrameLength)
    }

    /// As ``readFrames(slicedBy:pauseFrames:onFrame:)``, but hands over every whole frame
    /// that has arrived as one run of bytes (at least one frame, headers included): for relays and echo
    /// servers that pass frames on without looking inside, one call, one copy and one write per burst.
    public func readFrameRuns(
        slicedBy slicer: some FrameSlicer,
        pauseFrames: @escaping (TCPSocket) -> Bool = { _ in false },
        onFrames: @escaping (TCPSocket, UnsafeRawBufferPointer) -> Void
    ) {
        let frames = SlicedFrameRead(socket: self, slicer: slicer, pauseFrames: pauseFrames, onFrames: onFrames)
        consume({ try frames.consumeRuns($0) }, maxLength: slicer.maximumFrameLength)
    }

    /// Encodes `message` with `encoder` and queues the bytes as one write (see
    /// ``write(_:withTimeout:tag:)``).
    /// - Throws: the encoder's ``FramingError`` (a message too long for the length field, say); nothing
    ///   is queued then.
    public func writeFrame<Encoder: FrameEncoder>(
        _ message: Encoder.Message, using encoder: Encoder, withTimeout timeout: TimeInterval, tag: Int
    ) throws(FramingError) {
        write(try encoder.encode(message), withTimeout: timeout, tag: tag)
    }

    /// Queues a consuming read with no timeout whose only outcome that matters is an error, which the
    /// connection's end already reports to the delegate.
    private func consume(_ consumer: @escaping ByteConsumer, maxLength: Int) {
        read(.consuming(consumer, maxLength: maxLength), timeout: -1, tag: 0) { _ in }
    }
}

/// Where a one-frame read's consumer leaves the frame it decoded, and how many unread bytes it was last
/// shown, for the read's completion: written on the loop thread, read by the completion (on the loop) or
/// by the task the completion resumes. A lock orders the two explicitly (ThreadSanitizer saw the
/// handover through the continuation as a race, twice in ten runs): a `LockedValue`, whose
/// `pthread_mutex_t` ThreadSanitizer sees whole; it does not see all of Synchronization's
/// `Mutex`.
final class FrameSlot<Frame: Sendable>: Sendable {
    private let state = LockedValue<(value: Frame?, bytesSeen: Int)>((nil, 0))

    var value: Frame? {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }

    var bytesSeen: Int {
        get { state.withLock { $0.bytesSeen } }
        set { state.withLock { $0.bytesSeen = newValue } }
    }
}
