import AsyncSocket
import Foundation
import SocketFraming
import WebSocket

/// The server closed a WebSocket run's connection (a Close frame), with its code if it gave one.
struct ServerClosed: Error, CustomStringConvertible {
    let code: UInt16?
    var description: String { "the server sent Close\(code.map { " (code \($0))" } ?? "")" }
}

/// A WebSocket run's side of a connection (`socket-bench client websocket`): the opening handshake
/// (RFC 6455 §4.1) after TCP (and TLS) connect, then each echo read from the server's frames and checked
/// against the payloads sent. Loop thread.
extension BenchConnection {
    /// Sends the upgrade request and reads the answer: `opened()` once it is a valid 101, else the
    /// connection closes and counts as a failed connect.
    func upgrade() {
        guard let url = loop.options.webSocketURL else { return socket.disconnect() }
        let offers = loop.options.webSocket?.deflate == true ? [ClientDeflate.offer] : []
        let handshake = WebSocketClientHandshake(url: url, extensions: offers)
        socket.write(Data(handshake.request.bytes), withTimeout: -1, tag: 0)
        let maxBytes = HTTPResponseHeadParser.defaultMaxHeadBytes
        socket.readHTTPHead(with: HTTPResponseHeadParser(maxHeadBytes: maxBytes), maxBytes: maxBytes, timeout: Connector.timeout) {
            [unowned self] result in
            let head: HTTPResponseHead
            switch result {
            case nil: return  // the disconnect reports it
            case .failure(let error)?:
                loop.reportError("connection \(id): bad upgrade answer: \(error)")
                return socket.disconnect()
            case .success(let answer)?: head = answer
            }
            do {
                let accepted = try handshake.validate(head)
                if let response = accepted.extensions.first(where: { $0.name == PerMessageDeflate.extensionName }) {
                    deflate = try ClientDeflate(response: response)
                    loop.figures.deflateAccepted += 1
                }
                isUpgraded = true
                opened()
            } catch {
                loop.reportError("connection \(id): upgrade refused: \(error)")
                socket.disconnect()
            }
        }
    }

    /// Reads `bytes` (all the unread bytes) as server frames: echoes checked in place, Pings answered,
    /// a Close thrown. Returns how many messages (idle: Pongs) they completed.
    /// - Throws: ``EchoMismatch``, ``ServerFrameError``, ``ServerClosed``.
    func verifyWebSocket(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        let now = MonotonicClock.now()
        lastRead = now
        var completed = 0
        // The loop's state once per read, not once per use (each use of the unowned reference retained it).
        let loop = self.loop
        let isIdle = loop.options.mode == .idle
        let firstOpcode: UInt8 = loop.webSocketPattern?.opcode == 0x9 ? 0xA : loop.webSocketPattern?.opcode ?? 0x2
        try reader.consume(bytes) { frame, piece, endsFrame in
            switch frame.opcode {
            case 0x0...0x2 where loop.corpus != nil:
                if try receiveCorpusEcho(frame, piece, endsFrame: endsFrame, at: now) { completed += 1 }
            case 0x0...0x2 where !isIdle:
                if try checkEcho(
                    frame, piece, endsFrame: endsFrame, expectedOpcode: isInsideMessage ? 0x0 : firstOpcode, loop: loop, at: now)
                {
                    completed += 1
                }
            case 0xA where isIdle:
                if try checkEcho(frame, piece, endsFrame: endsFrame, expectedOpcode: firstOpcode, loop: loop, at: now) { completed += 1 }
            case 0xA:
                break  // an unsolicited Pong
            case 0x8, 0x9:
                controlPayload += piece
                guard endsFrame else { return }
                defer { controlPayload.removeAll(keepingCapacity: true) }
                if frame.opcode == 0x9 {
                    socket.write(WebSocketFramePattern.maskedFrame(opcode: 0xA, payload: controlPayload), withTimeout: -1, tag: 0)
                } else {
                    let code = controlPayload.count >= 2 ? UInt16(controlPayload[0]) << 8 | UInt16(controlPayload[1]) : nil
                    throw ServerClosed(code: code)
                }
            default:
                loop.figures.mismatches += 1
                throw EchoMismatch(frame: received, offset: receivedBytes)
            }
        }
        return completed
    }

    /// Checks one piece of an echo's payload (of the opcode expected: the pattern's for a message's first
    /// frame, a Pong for a Ping's echo, continuation after it); returns true when it completes the message.
    private func checkEcho(
        _ frame: ServerFrame, _ piece: UnsafeRawBufferPointer, endsFrame: Bool, expectedOpcode: UInt8, loop: LoopState, at now: UInt64
    ) throws -> Bool {
        let size = loop.pattern.payloadSize
        guard received < sent, frame.opcode == expectedOpcode, !frame.compressed, receivedBytes + piece.count <= size,
            piece.isEmpty || loop.pattern.matches(piece, sequence: received, connection: id, offset: 4 + receivedBytes)
        else {
            loop.figures.mismatches += 1
            throw EchoMismatch(frame: received, offset: receivedBytes)
        }
        receivedBytes += piece.count
        guard endsFrame && frame.fin else {
            if endsFrame { isInsideMessage = true }  // the next frame is a continuation
            return false
        }
        guard receivedBytes == size else {
            loop.figures.mismatches += 1
            throw EchoMismatch(frame: received, offset: receivedBytes)
        }
        loop.recordEcho(at: now, latency: now &- sendTimes[Int(received % UInt64(sendTimes.count))])
        received += 1
        receivedBytes = 0
        isInsideMessage = false
        return true
    }

    /// Corpus runs: queues messages `sent ..< limit` (compressed when deflate was agreed) as one write.
    func sendCorpus(at now: UInt64) {
        guard let corpus = loop.corpus else { return }
        var batch = Data()
        while sent < limit {
            let message = corpus.message(sent, connection: id)
            let payload = deflate?.compressor.compress(message) ?? message
            loop.figures.plainBytesSent += message.count
            loop.figures.wireBytesSent += payload.count
            batch.append(
                WebSocketFramePattern.maskedFrame(
                    opcode: WebSocketFramePattern.textOpcode, payload: [UInt8](payload), compressed: deflate != nil))
            sendTimes[Int(sent % UInt64(depth))] = now
            sent += 1
        }
        socket.write(batch, withTimeout: -1, tag: 0)
    }

    /// Corpus runs: gathers one piece of an echo; at its last frame inflates it if compressed and checks
    /// it against the message sent. Returns true when it completes the message.
    private func receiveCorpusEcho(_ frame: ServerFrame, _ piece: UnsafeRawBufferPointer, endsFrame: Bool, at now: UInt64) throws -> Bool {
        if !isInsideMessage && receivedMessage.isEmpty {
            isMessageCompressed = frame.compressed
            guard frame.opcode == WebSocketFramePattern.textOpcode, !frame.compressed || deflate != nil else {
                loop.figures.mismatches += 1
                throw EchoMismatch(frame: received, offset: 0)
            }
        }
        receivedMessage.append(contentsOf: piece)
        loop.figures.wireBytesReceived += piece.count
        guard endsFrame && frame.fin else {
            if endsFrame { isInsideMessage = true }
            return false
        }
        var plain = receivedMessage
        if isMessageCompressed, let deflate {
            plain = try deflate.decompressor.decompress(receivedMessage, maxMessageBytes: WebSocketEchoReader.maxLength)
        }
        guard received < sent, let corpus = loop.corpus, plain == corpus.message(received, connection: id) else {
            loop.figures.mismatches += 1
            throw EchoMismatch(frame: received, offset: 0)
        }
        loop.figures.plainBytesReceived += plain.count
        loop.recordEcho(at: now, latency: now &- sendTimes[Int(received % UInt64(sendTimes.count))], bytes: plain.count)
        received += 1
        receivedMessage.removeAll(keepingCapacity: true)
        isInsideMessage = false
        return true
    }
}
