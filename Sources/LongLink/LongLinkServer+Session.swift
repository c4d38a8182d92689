import AsyncSocket
import FramedSocket
import Foundation
import SocketFraming
import WebSocket
import Synchronization

extension LongLinkServer {
    /// One client's connection to a ``LongLinkServer``: its decoder, its timers (idle, admission,
    /// unfinished frame) and whatever the app keeps with it (``context``). Methods may be called from
    /// any thread.
    public final class Session: @unchecked Sendable, Hashable, CustomStringConvertible {
        /// Unique within its server, from 1, in order of arrival.
        public let id: Int
        /// The client's address.
        public let remoteAddress: SocketAddress?
        let socket: TCPSocket
        /// The WebSocket carrying the session on ``socket`` (``Configuration/webSocket``); nil over TCP.
        let webSocket: LinkWebSocketChannel?
        private let server: LongLinkServer
        /// The socket's delegate, and what the frame read's handlers capture: one small object that
        /// refers to the session weakly (closures capturing `[weak self]` cost a heap block each).
        private let relay: SessionRelay
        /// ``context``, and the heartbeat acknowledgements waiting for ``releaseHeartbeatAcknowledgements()``
        /// (nil when not held): one lock for both, one heap block per session.
        private let shared = LockedValue(Shared())

        /// What ``shared`` guards.
        private struct Shared {
            var context: (any Sendable)?
            var heldAcknowledgements: [Codec.Message]?
        }
        /// Set by ``admit()`` at the call, on the caller's thread, and cleared by ``requireAdmission()``:
        /// an admission timer that fires after an `admit()` whose cancel is still on its way to the
        /// loop does nothing. (It closed the session: a login accepted just before its deadline, while
        /// the loop was busy, was answered and then dropped for "login timeout".)
        private let isAdmitted = Atomic(false)

        /// What only the socket's loop reads and writes.
        private var loop = LoopState()

        /// Its place in its loop's ``IdleList`` (the socket's loop only): the idle timeout's state.
        var idleLink = IdleLink()
        /// Its loop's ``IdleList``, which drops it once silent for the idle timeout.
        private let idleList: IdleList

        /// The session's loop-confined state (the socket's loop).
        private struct LoopState {
            /// Set once the session is ending: why (frames arriving meanwhile are not handed on).
            var closeReason: CloseReason?
            /// The version (``LinkCodec/version(of:)``) of the client's last message, for farewells.
            var lastVersion: UInt16?
            var admissionTimer: Scheduled?
            /// When the unfinished frame's first byte arrived (loop clock, ns); nil when none is unfinished.
            var unfinishedSince: UInt64?
            var frameTimer: Scheduled?
        }

        init(id: Int, socket: TCPSocket, webSocket: LinkWebSocketChannel?, server: LongLinkServer) {
            self.id = id
            self.socket = socket
            self.webSocket = webSocket
            self.server = server
            self.remoteAddress = socket.connectedAddress
            self.relay = SessionRelay()
            self.idleList = server.idleList(for: socket.eventLoop)
            relay.session = self
            socket.setDelegate(relay, delegateQueue: nil)
        }

        /// Anything the app wants to keep with this session (the logged-in user's name, say).
        public var context: (any Sendable)? {
            get { shared.withLock { $0.context } }
            set { shared.withLock { $0.context = newValue } }
        }

        /// Whether a WebSocket carries the session (each frame one binary message: ``Configuration/webSocket``'s
        /// port or ``LongLinkServer/adoptWebSocket(_:request:)``); false over TCP (or TLS). Any thread.
        public var isWebSocket: Bool { webSocket != nil }

        /// `#id address`, for logs.
        public var description: String { "#\(id) \(remoteAddress?.description ?? "?")" }

        /// Whether the client's connection is still up (any thread): false once it has ended, even
        /// before the app has handled ``Event/closed(_:_:)``. For work queued elsewhere on its behalf
        /// (a password check) that is not worth doing for a client that has gone.
        public var isConnected: Bool { socket.isConnected }

        /// Sends `message` to this client after everything sent to it before. A message that cannot be
        /// encoded is not sent and is reported (``Event/sendFailed(_:reason:to:)``).
        public func send(_ message: Codec.Message) {
            if let data = server.encode(message, orReport: [self]) { write(data) }
        }

        /// Queues `data`, whole frames, after everything sent before: on the socket, or as one binary
        /// message per frame on the WebSocket.
        func write(_ data: Data) {
            if let webSocket { webSocket.send(data, tag: 0) } else { socket.write(data, withTimeout: -1, tag: 0) }
        }

        /// Closes once what was sent has gone out: TCP after writing, or the WebSocket's closing
        /// handshake with `code` (with the failure's own code after a ``WebSocketLinkError``).
        private func endAfterWriting(code: WebSocketCloseCode) {
            if let webSocket { webSocket.close(code: code) } else { socket.disconnectAfterWriting() }
        }

        /// Closes the session once what was sent to it has gone out; the app then gets
        /// ``Event/closed(_:_:)`` with ``CloseReason/byServer``.
        public func close() {
            socket.eventLoop.execute { [self] in
                if loop.closeReason == nil { loop.closeReason = .byServer }
                endAfterWriting(code: .normalClosure)
            }
        }

        /// The app accepts this client (it has logged in, say), or is deciding whether to and may take
        /// a while (a password being checked): the ``Configuration/admissionTimeout`` no longer applies
        /// to it, until ``requireAdmission()``. Calling it again does nothing.
        public func admit() {
            isAdmitted.store(true, ordering: .sequentiallyConsistent)
            socket.eventLoop.execute { [self] in
                loop.admissionTimer?.cancel()
                loop.admissionTimer = nil
            }
        }

        /// The app did not accept this client after all (a login it was checking failed): the
        /// ``Configuration/admissionTimeout`` starts again, a whole one from now. Does nothing without
        /// an admission timeout, or once the session is ending.
        public func requireAdmission() {
            isAdmitted.store(false, ordering: .sequentiallyConsistent)
            socket.eventLoop.execute { [self] in
                guard let timeout = server.configuration.admissionTimeout, loop.closeReason == nil else { return }
                loop.admissionTimer?.cancel()
                armAdmissionTimer(after: timeout)
            }
        }

        /// The app has put aside messages of this client to handle later (while it checks a login, say):
        /// acknowledgements of heartbeats that arrive from now on wait too, until
        /// ``releaseHeartbeatAcknowledgements()``, so that a heartbeat stays a barrier for the client
        /// (its acknowledgement follows the app's replies to everything sent before it). Call it on the
        /// event queue, from the event handler. Calling it again does nothing.
        public func holdHeartbeatAcknowledgements() {
            shared.withLock { if $0.heldAcknowledgements == nil { $0.heldAcknowledgements = [] } }
        }

        /// The app has handled what it put aside: the acknowledgements held since
        /// ``holdHeartbeatAcknowledgements()`` are sent, in order, after the replies sent before this
        /// call, and later ones go out as usual. Call it on the event queue. Does nothing when none are held.
        public func releaseHeartbeatAcknowledgements() {
            let held = shared.withLock { shared -> [Codec.Message] in
                defer { shared.heldAcknowledgements = nil }
                return shared.heldAcknowledgements ?? []
            }
            for acknowledgement in held { send(acknowledgement) }
        }

        public static func == (lhs: Session, rhs: Session) -> Bool { lhs === rhs }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }

        // MARK: Loop side

        /// Runs on the socket's loop before any of its events (the socket starts reading only after the
        /// accept callback that queued this has returned).
        func start() {
            let configuration = server.configuration
            idleList.touch(self, at: socket.eventLoop.now())
            if let timeout = configuration.admissionTimeout { armAdmissionTimer(after: timeout) }
            server.emit(.opened(self))
            if let webSocket {
                // TLS, if any, started before the upgrade; frame timeouts do not apply (the WebSocket's
                // message limit bounds an unfinished frame, the idle timeout its silence).
                webSocket.readFrames(
                    using: server.codec.makeDecoder(), onFailure: { [relay] error in relay.session?.badMessage(error) }
                ) { [relay] frame in
                    relay.session?.received(frame)
                }
                return
            }
            // The frame reads queued next wait for the handshake (startTLS is a barrier).
            if let tls = configuration.tls { socket.startTLS(tls) }
            // Each handler captures only the relay (no closure context of its own).
            let relay = relay
            let unfinished: ((TCPSocket, Int) -> Void)? =
                configuration.frameTimeout == nil
                ? nil
                : { _, _ in
                    relay.session?.frameUnfinished()
                }
            // Frames arriving while the session ends are not handed on (received(_:) checks loop.closeReason).
            socket.readFrames(
                using: SocketFrameDecoder(server.codec.makeDecoder()),
                onUnfinishedFrame: unfinished,
                onDecodingError: { _, error in relay.session?.badBytes(error) }
            ) { _, frame in
                relay.session?.received(frame)
            }
        }

        /// Stops handing frames on, tells the client why (the codec's farewell) and closes once that is
        /// written; the app gets ``Event/closed(_:_:)`` with `reason`. The farewell goes through the
        /// event queue, as heartbeat acknowledgements do, so it follows the app's replies to the messages
        /// that came before. Does nothing when the session is already ending. Loop thread, or any thread
        /// for ``LongLinkServer/shutDown(timeout:completion:)``.
        func refuse(_ refusal: LinkRefusal, reason: CloseReason) {
            guard socket.eventLoop.inEventLoop else {
                socket.eventLoop.execute { [self] in refuse(refusal, reason: reason) }
                return
            }
            guard loop.closeReason == nil else { return }
            loop.closeReason = reason
            let farewell = server.codec.farewell(refusal, version: loop.lastVersion)
            server.afterEvents { [self] in
                if let farewell { send(farewell) }
                endAfterWriting(code: refusal.webSocketCloseCode)
            }
        }

        /// Closes now, without waiting for unsent bytes (the end of a shutdown's grace time).
        func closeNow() {
            socket.eventLoop.execute { [self] in
                if loop.closeReason == nil { loop.closeReason = .shuttingDown }
                socket.disconnect()
            }
        }

        private func armAdmissionTimer(after timeout: Duration) {
            loop.admissionTimer = socket.eventLoop.scheduleTask(in: timeout) { [self] in
                loop.admissionTimer = nil
                guard !isAdmitted.load(ordering: .sequentiallyConsistent) else { return }
                refuse(.admissionTimeout(timeout), reason: .admissionTimeout)
            }
        }

        /// Silent for the idle timeout (its ``IdleList`` has taken it off): closed at once.
        func idleTimedOut() {
            if loop.closeReason == nil { loop.closeReason = .idleTimeout }
            socket.disconnect()
        }

        fileprivate func tooSlow(_ queuedBytes: Int) {
            loop.closeReason = .slowConsumer(queuedBytes: queuedBytes)
            socket.disconnect()
        }

        /// The decoder refused the bytes after the frames handed on: a protocol error, told to the client.
        fileprivate func badBytes(_ error: FramingError) {
            let why = server.codec.describe(error)
            refuse(.protocolError(why), reason: .protocolError(why))
        }

        /// A WebSocket message that is not one whole frame (or text, or a WebSocket failure): a protocol
        /// error, told to the client (its farewell, then a Close frame with the error's code).
        fileprivate func badMessage(_ error: WebSocketLinkError) {
            let why = server.codec.describe(error)
            refuse(.protocolError(why), reason: .protocolError(why))
        }

        // MARK: Unfinished frames

        /// An arrival left bytes of an unfinished frame: its deadline runs from its first byte.
        fileprivate func frameUnfinished() {
            guard let timeout = server.configuration.frameTimeout else { return }
            if loop.unfinishedSince == nil { loop.unfinishedSince = socket.eventLoop.now() }
            if loop.frameTimer == nil { armFrameTimer(after: timeout) }
        }

        private func armFrameTimer(after delay: Duration) {
            loop.frameTimer = socket.eventLoop.scheduleTask(in: delay) { [self] in
                loop.frameTimer = nil
                guard let timeout = server.configuration.frameTimeout, let since = loop.unfinishedSince else { return }
                let waited = socket.eventLoop.now() &- since
                if waited >= timeout.nanosecondsValue {
                    refuse(.frameTimeout(timeout), reason: .frameTimeout)
                } else {
                    armFrameTimer(after: .nanoseconds(Int64(clamping: timeout.nanosecondsValue - waited)))
                }
            }
        }

        /// One whole frame, on the socket's loop (FramedSocket's shared receive path: decoded in place,
        /// no copy before the decoder's own).
        fileprivate func received(_ frame: Codec.Decoder.Frame) {
            guard loop.closeReason == nil else { return }
            // Only whole frames count as activity, so a peer dripping one byte at a time ("slowloris")
            // is still dropped at the idle timeout (or, sooner, at the frame timeout).
            idleList.touch(self, at: socket.eventLoop.now())
            // The unfinished frame, if any, was this one: bytes left after it (reported next) start another.
            loop.unfinishedSince = nil
            let message: Codec.Message
            do {
                message = try server.codec.message(from: frame)
            } catch {
                let why = server.codec.describe(error)
                refuse(.protocolError(why), reason: .protocolError(why))
                return
            }
            loop.lastVersion = server.codec.version(of: message)
            if server.codec.isHeartbeat(message) {
                // Through the event queue, so the acknowledgement follows the app's replies to the
                // messages before the heartbeat.
                server.afterEvents { [self] in
                    server.heartbeatCount.add(1, ordering: .relaxed)
                    let acknowledgement = server.codec.heartbeatAck(answering: message)
                    let held = shared.withLock { shared -> Bool in
                        shared.heldAcknowledgements?.append(acknowledgement)
                        return shared.heldAcknowledgements != nil
                    }
                    if !held { send(acknowledgement) }
                }
            } else {
                server.emit(.received(message, from: self))
            }
        }

        fileprivate func finish(error: SocketError?) {
            let error = webSocket.map { $0.transportClosed(error) } ?? error
            idleList.remove(self)
            loop.admissionTimer?.cancel()
            loop.admissionTimer = nil
            loop.frameTimer?.cancel()
            loop.frameTimer = nil
            let reason: CloseReason
            switch error {
            case nil: reason = loop.closeReason ?? .byServer
            case .closedByPeer?: reason = loop.closeReason ?? .byClient
            case .decodingFailed(let failure)?: reason = loop.closeReason ?? .protocolError(server.codec.describe(failure.underlying))
            case let error?: reason = loop.closeReason ?? .network(error)
            }
            let isLast = server.remove(self)
            server.emit(.closed(self, reason))
            if isLast { server.lastSessionClosed() }
        }
    }

    /// A session's socket delegate (the two socket events a session handles, on the socket's loop) and
    /// the target of its frame read's handlers: it refers to the session weakly, so the socket's
    /// callbacks and reads hold no session alive, at the cost of one small heap block per session
    /// rather than a delegate of closures and a weak capture box per handler.
    final class SessionRelay: TCPSocketDelegate, @unchecked Sendable {
        /// Set once, on the accepting thread, before the socket has a delegate or a read.
        weak var session: Session?

        func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) { session?.finish(error: err) }

        func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) { session?.tooSlow(queuedBytes) }
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to 0…UInt64.max.
    var nanosecondsValue: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}
