import AsyncSocket
import Dispatch
import FramedSocket
import Foundation
import SocketFraming
import SocketLog

/// What the driver holds for its ``LinkMachine``: the socket, the running timers, and the inputs that
/// arrived while actions were being performed. Loop only.
struct LinkResources<Codec: LinkCodec> {
    /// The socket of the current attempt or connection; callbacks from any other are ignored.
    var socket: TCPSocket?
    /// A WebSocket endpoint's opening handshake in progress on ``socket``; nil over TCP and once open.
    var opening: WebSocketOpening?
    /// The WebSocket carrying the connection on ``socket`` once open; nil over TCP.
    var webSocket: LinkWebSocketChannel?
    var timers: [LinkTimer: Scheduled] = [:]
    /// Inputs fed while the machine's actions are performed (a socket callback made inline): handled
    /// after them, in order.
    var pending: [LinkInput<Codec>] = []
    var isHandling = false
    /// ``SmartHeartbeat/networkChanges`` was started.
    var watchesNetwork = false
}

extension LongLinkClient {
    // MARK: The driver

    /// Hands `input` to the machine and performs the actions it returns. Loop only. An input fed while
    /// actions are performed (a socket that reports its disconnect inline) waits until they are done,
    /// so the machine only ever sees one input at a time.
    func feed(_ input: LinkInput<Codec>) {
        loop.assertInEventLoop()
        resources.pending.append(input)
        guard !resources.isHandling else { return }
        resources.isHandling = true
        defer { resources.isHandling = false }
        while !resources.pending.isEmpty {
            let next = resources.pending.removeFirst()
            machine.now = loop.now()
            for action in machine.handle(next) { perform(action) }
        }
    }

    private func perform(_ action: LinkAction<Codec>) {
        switch action {
        case .watchNetwork: watchNetwork()
        case .connect(let endpoint, let timeout): connect(to: endpoint, timeout: timeout)
        case .startTLS(let tls):
            // A WebSocket endpoint's TLS (wss) started before its upgrade.
            if resources.webSocket == nil { resources.socket?.startTLS(tls) }
        case .startReading:
            if let webSocket = resources.webSocket { startReading(webSocket) } else { startReading() }
        case .write(let data, let tag):
            if let webSocket = resources.webSocket {
                webSocket.send(data, tag: tag)
            } else {
                resources.socket?.write(data, withTimeout: -1, tag: tag)
            }
        case .close(let afterWriting):
            if afterWriting, let webSocket = resources.webSocket {
                webSocket.close(code: .normalClosure)
            } else if afterWriting {
                resources.socket?.disconnectAfterWriting()
            } else {
                resources.socket?.disconnect()
            }
        case .abandonSocket:
            guard let socket = resources.socket else { return }
            resources.socket = nil
            resources.opening = nil
            resources.webSocket = nil
            socket.disconnect()
        case .emit(let event): emit(event)
        case .schedule(let timer, let delay):
            resources.timers[timer]?.cancel()
            resources.timers[timer] = loop.scheduleTask(in: delay) { [self] in
                resources.timers[timer] = nil
                feed(.timerFired(timer))
            }
        case .cancel(let timer): resources.timers.removeValue(forKey: timer)?.cancel()
        case .scheduleFlush: loop.execute { [self] in feed(.flushDue) }
        case .persist(let last, let then): persist(through: last, then: then)
        }
    }

    private func connect(to endpoint: Endpoint, timeout: TimeInterval) {
        let socket = TCPSocket(delegate: socketCallbacks, delegateQueue: nil, group: group, eventLoop: loop)
        socket.writeHighWatermark = configuration.maxQueuedBytes
        socket.writeLowWatermark = configuration.maxQueuedBytes / 2
        resources.socket = socket
        resources.opening = endpoint.webSocketURL.map { WebSocketOpening(url: $0) }
        resources.webSocket = nil
        do {
            try socket.connect(toHost: endpoint.host, onPort: endpoint.port, withTimeout: timeout)
        } catch {
            resources.socket = nil
            resources.opening = nil
            feed(.connectFailed(error))
        }
    }

    /// FramedSocket's shared receive path (as the server's): frames decoded in place; a drop stops the
    /// handing on.
    private func startReading() {
        guard let socket = resources.socket else { return }
        socket.readFrames(
            using: SocketFrameDecoder(codec.makeDecoder()),
            pauseFrames: { [weak self] _ in self?.machine.isDropping ?? false }
        ) { [weak self] socket, frame in
            guard let self, socket === resources.socket else { return }
            feed(.frame(frame))
        }
    }

    /// Starts ``SmartHeartbeat/networkChanges`` on the first connect.
    private func watchNetwork() {
        guard !resources.watchesNetwork, let source = machine.smart?.policy.networkChanges else { return }
        resources.watchesNetwork = true
        do {
            try source.start { [weak self] in
                guard let self else { return }
                onLoop { [self] in feed(.networkChanged(reportedByApp: false)) }
            }
        } catch {
            logger.warning("not watching routing changes: \(error)")
        }
    }

    private func emit(_ event: Event) {
        switch event {
        case .received, .stored, .refused: logger.trace("\(event)")
        default: logger.debug("\(event)")
        }
        events.emit(event)
    }

    // MARK: Socket callbacks

    /// Socket callbacks run on the link's loop (delegate queue nil); stale sockets are ignored.
    func wire(_ callbacks: SocketCallbacks) {
        callbacks.didConnect = { [weak self] sock, host, port in
            guard let self, sock === resources.socket else { return }
            if resources.opening != nil { return openWebSocket(host: host, port: port) }
            feed(.socketConnected(host: host, port: port, greeting: greeting))
        }
        callbacks.didWrite = { [weak self] sock, tag in
            guard let self, sock === resources.socket, tag != LinkMachine<Codec>.controlTag else { return }
            feed(.written(upTo: tag))
        }
        callbacks.didDisconnect = { [weak self] sock, error in
            guard let self, sock === resources.socket else { return }
            resources.socket = nil
            let opening = resources.opening
            let webSocket = resources.webSocket
            resources.opening = nil
            resources.webSocket = nil
            // A WebSocket's end says more: this side's typed error, or the server's Close.
            let failure = opening?.failure.map { SocketError.decodingFailed(DecodingFailure($0)) }
            feed(.socketDisconnected(failure ?? webSocket?.transportClosed(error) ?? error))
        }
        callbacks.didSecure = { [weak self] sock in
            guard let self, sock === resources.socket else { return }
            if resources.opening != nil { return sendUpgradeRequest() }
            feed(.secured(protocolVersion: sock.tlsProtocolVersion ?? "", isSessionReused: sock.isTLSSessionReused))
        }
        callbacks.didExceedHighWatermark = { [weak self] sock, _ in
            guard let self, sock === resources.socket else { return }
            feed(.writeQueueFull)
        }
        callbacks.didFallToLowWatermark = { [weak self] sock, _ in
            guard let self, sock === resources.socket else { return }
            feed(.writeQueueDrained)
        }
    }
}
