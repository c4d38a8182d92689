import AsyncSocket
import Foundation
import SocketFraming
import WebSocket

/// One LongLink connection carried by a WebSocket whose upgrade is done: each LongLink frame is one
/// binary message (<doc:LongLinkOverWebSocket>). It drives WebSocket's ``WebSocketProtocolHandler`` over
/// the connection's `TCPSocket` itself (a consuming read, as the WebSocket module's own connection does),
/// so the socket's delegate stays the link's: write tags, watermarks, TLS and the disconnect reach the
/// link exactly as over TCP. No keep-alive pings: LongLink's heartbeats keep the link alive.
///
/// Package access: `socket-bench client chat --websocket` (ChatBench) drives its load's connections
/// with it too.
///
/// Loop-confined (the socket's loop), except ``send(_:tag:)`` and ``close(code:)``, which hop to
/// it as `TCPSocket/write(_:withTimeout:tag:)` does (inline on the loop, else in order as a task).
package final class LinkWebSocketChannel: @unchecked Sendable {
    package let socket: TCPSocket
    private var handler: WebSocketProtocolHandler
    private var closeTimer: Scheduled?
    /// The tag of the channel's own writes (Close frames, Pongs): the link's control tag.
    private let controlTag: Int
    /// Why this side ended the connection; nil otherwise.
    private(set) var failure: WebSocketLinkError?
    /// The peer's Close frame arrived before this side sent one.
    private(set) var closedByPeer = false
    /// Called (loop) once when this side ends the connection for ``failure``.
    private var onFailure: (WebSocketLinkError) -> Void = { _ in }

    /// A channel over `socket` for `role`; messages (and so frames) longer than `maxMessageBytes` fail
    /// the connection with 1009.
    package init(socket: TCPSocket, role: WebSocketRole, maxMessageBytes: Int, controlTag: Int) {
        self.socket = socket
        self.controlTag = controlTag
        let limit = max(1, min(maxMessageBytes, WebSocketFrameDecoder.defaultMaxFrameSize))
        handler = WebSocketProtocolHandler(role: role, maxFrameSize: limit, maxMessageSize: limit, keepAlive: nil)
    }

    /// Reads messages until the connection ends and hands on the frame each one holds, decoded by
    /// `decoder` (on the loop). Frames are not handed on while `pause` says so (the link is ending it).
    /// A message that is not one whole frame, or a text message, stops the frames: ``failure`` is set
    /// and `onFailure` called, and the owner closes (``close(code:)``). Call once.
    package func readFrames<Decoder: FrameDecoder & Sendable>(
        using decoder: Decoder, pause: @escaping () -> Bool = { false }, onFailure: @escaping (WebSocketLinkError) -> Void,
        onFrame: @escaping (Decoder.Frame) -> Void
    ) {
        self.onFailure = onFailure
        let reader = FrameReader(decoder: decoder, pause: pause, onFrame: onFrame)
        let deliver: @Sendable (Data) -> Void = { [weak self] data in
            guard let self, failure == nil, !reader.pause() else { return }
            do throws(WebSocketLinkError) {
                try reader.take(data)
            } catch {
                fail(error)
            }
        }
        socket.read(
            .consuming(
                { [weak self] bytes in self?.consume(bytes, deliver) ?? .complete(consumed: 0) }, maxLength: handler.maximumFrameLength),
            timeout: -1, tag: 0
        ) { _ in }
    }

    /// A read's decoder and where its frames go (loop-confined, like the channel).
    private final class FrameReader<Decoder: FrameDecoder>: @unchecked Sendable {
        var decoder: Decoder
        let pause: () -> Bool
        let onFrame: (Decoder.Frame) -> Void

        init(decoder: Decoder, pause: @escaping () -> Bool, onFrame: @escaping (Decoder.Frame) -> Void) {
            self.decoder = decoder
            self.pause = pause
            self.onFrame = onFrame
        }

        /// Hands on the one frame `message` holds.
        func take(_ message: Data) throws(WebSocketLinkError) {
            onFrame(try LinkWebSocketChannel.frame(in: message, using: &decoder))
        }
    }

    /// The one frame `message` holds, all of its bytes.
    static func frame<Decoder: FrameDecoder>(in message: Data, using decoder: inout Decoder) throws(WebSocketLinkError) -> Decoder.Frame {
        let decoded: (result: Decoder.Frame?, consumed: Int)
        do {
            decoded = try message.withUnsafeBytes { bytes in
                try FrameBuffer.borrowing(bytes) { buffer throws(FramingError) in try decoder.decode(&buffer) }
            }
        } catch let error as FramingError {
            throw .invalidFrame(error)
        } catch {
            throw .notOneFrame(messageBytes: message.count, frameBytes: nil)
        }
        guard let frame = decoded.result, decoded.consumed == message.count else {
            throw .notOneFrame(messageBytes: message.count, frameBytes: decoded.result == nil ? nil : decoded.consumed)
        }
        return frame
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, _ deliver: (Data) -> Void) -> ByteConsumption {
        var outputs: [WebSocketProtocolHandler.Output] = []
        let open = handler.handshake.state == .open
        let consumed = FrameBuffer.borrowing(bytes) { buffer in outputs = handler.receive(&buffer) }.consumed
        if open, case .handshakeDone = handler.handshake.state { closedByPeer = true }
        run(outputs, tag: controlTag, deliver: deliver)
        return handler.isClosed ? .complete(consumed: consumed) : .needMoreData(consumed: consumed)
    }

    /// Sends `frame` (one whole LongLink frame) as one binary message, its bytes written with `tag`.
    /// Dropped once closing has begun (the link's disconnect follows).
    package func send(_ frame: Data, tag: Int) {
        onLoop { [self] in
            guard let outputs = try? handler.send(.binary(frame)) else { return }
            run(outputs, tag: tag)
        }
    }

    /// Starts the closing handshake (RFC 6455 §7.1.2) with `code`, or with ``failure``'s code and
    /// description once there is one (cut to a Close frame's 123 bytes by the handler): a Close frame
    /// after what was sent; TCP closes once the peer answers (a server closes it then; a client waits
    /// for the server to), or after the close timeout (10 s). Nothing once closing has begun.
    package func close(code: WebSocketCloseCode) {
        onLoop { [self] in
            run(handler.close(code: failure?.closeCode ?? code, reason: failure?.description ?? ""), tag: controlTag)
        }
    }

    /// Stops handing frames on and tells the owner, which closes (``close(code:)``, after a farewell
    /// if it has one).
    private func fail(_ error: WebSocketLinkError) {
        guard failure == nil else { return }
        failure = error
        onFailure(error)
    }

    /// The socket ended (its delegate's disconnect, on the loop): the timer stops. Returns the error to
    /// report for it: this side's ``failure`` as `decodingFailed`, `closedByPeer` after the peer's
    /// Close, else `error`.
    package func transportClosed(_ error: SocketError?) -> SocketError? {
        run(handler.transportClosed(), tag: controlTag)
        if let failure { return .decodingFailed(DecodingFailure(failure)) }
        if error == nil && closedByPeer { return .closedByPeer }
        return error
    }

    private func run(_ outputs: [WebSocketProtocolHandler.Output], tag: Int, deliver: (Data) -> Void = { _ in }) {
        // The handler failed the connection itself (a broken frame, a message too big): said before
        // its TCP close is started, which may report the disconnect at once.
        for case .closed(let result) in outputs where failure == nil && !result.wasClean && result.code != .abnormalClosure {
            failure = .webSocket(result)
            onFailure(.webSocket(result))
        }
        for output in outputs {
            switch output {
            case .write(let bytes): socket.write(bytes, withTimeout: -1, tag: tag)
            case .message(.binary(let data)): deliver(data)
            case .message(.text): fail(.textMessage)
            case .message, .pong, .startKeepAliveTimer: break
            case .closeTransport(let afterWriting):
                if afterWriting { socket.disconnectAfterWriting() } else { socket.disconnect() }
            case .startCloseTimer(let delay):
                closeTimer?.cancel()
                closeTimer = socket.eventLoop.scheduleTask(in: delay) { [weak self] in
                    guard let self else { return }
                    run(handler.closeTimerFired(), tag: controlTag)
                }
            case .cancelCloseTimer:
                closeTimer?.cancel()
                closeTimer = nil
            case .closed:
                closeTimer?.cancel()
                closeTimer = nil
            }
        }
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if socket.eventLoop.inEventLoop { body() } else { socket.eventLoop.execute(body) }
    }
}
