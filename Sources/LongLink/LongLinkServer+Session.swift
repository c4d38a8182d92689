import AsyncSocket
import FramedSocket
import Foundation
import SocketFraming

extension LongLinkServer {
    /// One client's connection to a ``LongLinkServer``: its decoder, its idle timer and whatever the
    /// app keeps with it (``context``). Methods may be called from any thread.
    public final class Session: @unchecked Sendable, Hashable, CustomStringConvertible {
        /// Unique within its server, from 1, in order of arrival.
        public let id: Int
        /// The client's address.
        public let remoteAddress: SocketAddress?
        let socket: TCPSocket
        private let server: LongLinkServer
        private let socketCallbacks = SocketCallbacks()
        private let contextStorage = LockedValue<(any Sendable)?>(nil)

        // Loop-confined state (the socket's loop).
        private var lastActivity: UInt64 = 0
        private var idleTimer: Scheduled?
        private var closeReason: CloseReason?

        init(id: Int, socket: TCPSocket, server: LongLinkServer) {
            self.id = id
            self.socket = socket
            self.server = server
            self.remoteAddress = socket.connectedAddress
            socketCallbacks.didDisconnect = { [weak self] _, error in self?.finish(error: error) }
            socketCallbacks.didExceedHighWatermark = { [weak self] _, queued in self?.tooSlow(queued) }
            socket.setDelegate(socketCallbacks, delegateQueue: nil)
        }

        /// Anything the app wants to keep with this session (the logged-in user's name, say).
        public var context: (any Sendable)? {
            get { contextStorage.withLock { $0 } }
            set { contextStorage.withLock { $0 = newValue } }
        }

        /// `#id address`, for logs.
        public var description: String { "#\(id) \(remoteAddress?.description ?? "?")" }

        /// Sends `message` to this client after everything sent to it before. Messages that cannot be
        /// encoded are dropped.
        public func send(_ message: Codec.Message) {
            guard let data = try? server.codec.encode(message) else { return }
            socket.write(data, withTimeout: -1, tag: 0)
        }

        /// Closes the session once what was sent to it has gone out; the app then gets
        /// ``Event/closed(_:_:)`` with ``CloseReason/byServer``.
        public func close() {
            socket.eventLoop.execute { [self] in
                if closeReason == nil { closeReason = .byServer }
                socket.disconnectAfterWriting()
            }
        }

        public static func == (lhs: Session, rhs: Session) -> Bool { lhs === rhs }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }

        // MARK: Loop side

        /// Runs on the socket's loop before any of its events (the socket starts reading only after the
        /// accept callback that queued this has returned).
        func start() {
            lastActivity = socket.eventLoop.now()
            armIdleTimer(after: server.configuration.idleTimeout)
            server.emit(.opened(self))
            socket.readFrames(using: SocketFrameDecoder(server.codec.makeDecoder())) { [weak self] _, frame in
                self?.received(frame)
            }
        }

        private func armIdleTimer(after delay: Duration) {
            idleTimer = socket.eventLoop.scheduleTask(in: delay) { [self] in
                let timeout = server.configuration.idleTimeout.nanosecondsValue
                let silent = socket.eventLoop.now() &- lastActivity
                if silent >= timeout {
                    closeReason = .idleTimeout
                    socket.disconnect()
                } else {
                    armIdleTimer(after: .nanoseconds(Int64(clamping: timeout - silent)))
                }
            }
        }

        private func tooSlow(_ queuedBytes: Int) {
            closeReason = .slowConsumer(queuedBytes: queuedBytes)
            socket.disconnect()
        }

        /// One whole frame, on the socket's loop (FramedSocket's shared receive path: decoded in place,
        /// no copy before the decoder's own).
        private func received(_ frame: Codec.Decoder.Frame) {
            // Only whole frames count as activity, so a peer dripping one byte at a time ("slowloris")
            // is still dropped at the idle timeout.
            lastActivity = socket.eventLoop.now()
            let message: Codec.Message
            do {
                message = try server.codec.message(from: frame)
            } catch {
                closeReason = .protocolError("\(error)")
                socket.disconnect()
                return
            }
            if server.codec.isHeartbeat(message) {
                // Through the event queue, so the acknowledgement follows the app's replies to the
                // messages before the heartbeat.
                server.afterEvents { [self] in send(server.codec.heartbeatAck(answering: message)) }
            } else {
                server.emit(.received(message, from: self))
            }
        }

        private func finish(error: SocketError?) {
            idleTimer?.cancel()
            idleTimer = nil
            let reason: CloseReason
            switch error {
            case nil: reason = closeReason ?? .byServer
            case .closedByPeer?: reason = closeReason ?? .byClient
            case .decodingFailed(let failure)?: reason = closeReason ?? .protocolError("\(failure)")
            case let error?: reason = closeReason ?? .network(error)
            }
            server.remove(self)
            server.emit(.closed(self, reason))
        }
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
