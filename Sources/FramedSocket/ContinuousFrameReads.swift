import AsyncSocket
import SocketFraming

// The reads that go on for the rest of a connection, handing frames on as they come
// (`TCPSocket.readFrames`, `readFrameRuns`). One object per read, whose `consume` is the read's
// `ByteConsumer`: the consumer closure captures only the object, and the app's handlers are given the
// socket rather than capturing it, so an idle connection holds one small object for its frame read. Used only on the socket's event-loop thread (hence
// unchecked `Sendable`).

/// Frames found by a ``FrameSlicer``, handed on as borrowed bytes one by one (``consumeFrames(_:)``), or
/// as one run per arrival (``consumeRuns(_:)``): the read's consumer calls one of the two, so the object
/// stores no mode (an idle connection carries this object: 136 bytes with a
/// `LengthFieldBasedFrameDecoder`, one 144-byte heap block).
final class SlicedFrameRead<Slicer: FrameSlicer>: @unchecked Sendable {
    private unowned let socket: TCPSocket
    private let slicer: Slicer
    private let pauseFrames: (TCPSocket) -> Bool
    private let onFrames: (TCPSocket, UnsafeRawBufferPointer) -> Void

    init(
        socket: TCPSocket, slicer: Slicer, pauseFrames: @escaping (TCPSocket) -> Bool,
        onFrames: @escaping (TCPSocket, UnsafeRawBufferPointer) -> Void
    ) {
        self.socket = socket
        self.slicer = slicer
        self.pauseFrames = pauseFrames
        self.onFrames = onFrames
    }

    /// Hands on every whole frame of `bytes`, one call each, until paused.
    func consumeFrames(_ bytes: UnsafeRawBufferPointer) throws -> ByteConsumption {
        var consumed = 0
        while !isPaused {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[consumed...])
            guard let length = try frameLength(rest, after: consumed) else { return .needMoreData(consumed: consumed) }
            onFrames(socket, UnsafeRawBufferPointer(rebasing: rest[..<length]))
            consumed += length
        }
        return .complete(consumed: consumed)
    }

    /// Hands on the run of every whole frame of `bytes` in one call, unless paused. The slicer finds
    /// the run in one call too (``FrameSlicer/wholeFramesLength(in:)``).
    func consumeRuns(_ bytes: UnsafeRawBufferPointer) throws -> ByteConsumption {
        if isPaused { return .complete(consumed: 0) }
        let consumed = try slicer.wholeFramesLength(in: bytes)
        if consumed > 0 { onFrames(socket, UnsafeRawBufferPointer(rebasing: bytes[..<consumed])) }
        return .needMoreData(consumed: consumed)
    }

    /// The socket was closed by a frame handler, or the app asks for a pause.
    private var isPaused: Bool { !socket.isConnectedOnLoop || pauseFrames(socket) }

    /// The length of the first frame of `bytes`; nil when incomplete, and also when the frame is bad
    /// but `consumed` bytes of good frames come before it: those are counted first, and the bad bytes
    /// throw on the next call, so the connection ends with exactly them unread.
    private func frameLength(_ bytes: UnsafeRawBufferPointer, after consumed: Int) throws(FramingError) -> Int? {
        do {
            return try slicer.frameLength(in: bytes)
        } catch  where consumed > 0 {
            return nil
        }
    }
}

/// Frames decoded by a connection's ``SocketFrameDecoder``, handed on one by one.
final class DecodedFrameRead<Decoder: FrameDecoder & Sendable>: @unchecked Sendable where Decoder.Frame: Sendable {
    private unowned let socket: TCPSocket
    private let decoder: SocketFrameDecoder<Decoder>
    private let pauseFrames: (TCPSocket) -> Bool
    private let onFrame: (TCPSocket, Decoder.Frame) -> Void
    private let onUnfinishedFrame: ((TCPSocket, Int) -> Void)?
    private let onDecodingError: ((TCPSocket, FramingError) -> Void)?

    init(
        socket: TCPSocket, decoder: SocketFrameDecoder<Decoder>, pauseFrames: @escaping (TCPSocket) -> Bool,
        onUnfinishedFrame: ((TCPSocket, Int) -> Void)? = nil, onDecodingError: ((TCPSocket, FramingError) -> Void)? = nil,
        onFrame: @escaping (TCPSocket, Decoder.Frame) -> Void
    ) {
        self.socket = socket
        self.decoder = decoder
        self.pauseFrames = pauseFrames
        self.onUnfinishedFrame = onUnfinishedFrame
        self.onDecodingError = onDecodingError
        self.onFrame = onFrame
    }

    /// Decodes and hands on every whole frame of `bytes` until paused, then reports the bytes left of
    /// an unfinished frame (``TCPSocket/readFrames(using:pauseFrames:onUnfinishedFrame:onDecodingError:onFrame:)``).
    /// A decoder error after frames already handed on in the same call is thrown (or handed to
    /// `onDecodingError`) at the next call, so those frames count as consumed.
    func consume(_ bytes: UnsafeRawBufferPointer) throws -> ByteConsumption {
        if let error = decoder.pendingError {
            decoder.pendingError = nil
            return try failed(error)
        }
        var consumed = 0
        while socket.isConnectedOnLoop && !pauseFrames(socket) {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[consumed...])
            let frame: Decoder.Frame?, used: Int
            switch Result(catching: { () throws(FramingError) in try decoder.decode(rest) }) {
            case .success(let decoded):
                (frame, used) = decoded
            case .failure(let error):
                guard consumed > 0 else { return try failed(error) }
                decoder.pendingError = error
                return .needMoreData(consumed: consumed)
            }
            consumed += used
            guard let frame else {
                if consumed < bytes.count { onUnfinishedFrame?(socket, bytes.count - consumed) }
                return .needMoreData(consumed: consumed)
            }
            onFrame(socket, frame)
        }
        return .complete(consumed: consumed)
    }

    /// Throws `error`, or hands it to `onDecodingError` and ends the read with the bad bytes unread.
    private func failed(_ error: FramingError) throws -> ByteConsumption {
        guard let onDecodingError else { throw error }
        onDecodingError(socket, error)
        return .complete(consumed: 0)
    }
}
