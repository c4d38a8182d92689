import Foundation
import SocketFraming

/// The fuzzing end of one connection: its socket, the opening handshake done by hand, crafted frames
/// out (masked when it is the client), and the testee's frames in, decoded by SocketFraming's decoder in
/// the fuzzer's role (so a testee server that masks, or a testee client that does not, is caught).
final class FuzzPeer {
    let socket: RawSocket
    let isClient: Bool
    let deadline: ContinuousClock.Instant
    private var buffer = FrameBuffer()
    private var decoder: WebSocketFrameDecoder
    private var generator = SystemRandomNumberGenerator()
    /// permessage-deflate's two directions, when negotiated.
    private let compressor: PerMessageDeflate.Compressor?
    private let decompressor: PerMessageDeflate.Decompressor?

    private init(socket: RawSocket, isClient: Bool, negotiation: ConformanceNegotiation, deadline: ContinuousClock.Instant) {
        self.socket = socket
        self.isClient = isClient
        self.deadline = deadline
        let role: PerMessageDeflate.Role = isClient ? .client : .server
        if case .permessageDeflate(_, _, let agreement) = negotiation {
            compressor = PerMessageDeflate.Compressor(agreement: agreement, role: role)
            decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: role)
            decoder = WebSocketFrameDecoder(role: isClient ? .client : .server, allowedReservedBits: .rsv1)
        } else {
            compressor = nil
            decompressor = nil
            decoder = WebSocketFrameDecoder(role: isClient ? .client : .server)
        }
    }

    /// A fuzzing client on a new connection to the testee server on `port`, its handshake done.
    /// `bytewise`: the request is written a byte at a time.
    static func client(
        port: UInt16, negotiation: ConformanceNegotiation, bytewise: Bool = false, deadline: ContinuousClock.Instant
    ) throws -> FuzzPeer {
        let peer = FuzzPeer(socket: try RawSocket.connect(port: port), isClient: true, negotiation: negotiation, deadline: deadline)
        let key = WebSocketHandshake.randomKey()
        var request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if case .permessageDeflate(let offer, _, _) = negotiation { request += "Sec-WebSocket-Extensions: \(offer)\r\n" }
        let requestBytes = Data((request + "\r\n").utf8)
        _ = try peer.socket.write(requestBytes, cuts: bytewise ? Array(1..<requestBytes.count) : [], before: deadline)
        let head = try peer.readHead()
        let accept = "sec-websocket-accept: \(WebSocketHandshake.acceptValue(forKey: key).lowercased())"
        guard head.hasPrefix("http/1.1 101 "), head.contains(accept) else {
            throw RawSocket.Failure(description: "not an upgrade: \(head)")
        }
        if case .permessageDeflate(_, let answer, _) = negotiation, !head.contains("sec-websocket-extensions: \(answer.lowercased())") {
            throw RawSocket.Failure(description: "extensions not answered with \(answer): \(head)")
        }
        return peer
    }

    /// The fuzzing server's side of a connection the testee client opened on `listening`, its handshake
    /// answered; when `gluesAnswer`, the answer is held and written in one write with the first frames
    /// (frames glued to the 101, as RFC 6455 allows a server); when `bytewise`, it is written a byte at a
    /// time.
    static func server(
        accepting listening: RawSocket, negotiation: ConformanceNegotiation, gluesAnswer: Bool = false, bytewise: Bool = false,
        deadline: ContinuousClock.Instant
    ) throws -> FuzzPeer {
        let peer = FuzzPeer(socket: try listening.accept(before: deadline), isClient: false, negotiation: negotiation, deadline: deadline)
        let head = try peer.readHead()
        guard head.hasPrefix("get "), let key = peer.originalKey else {
            throw RawSocket.Failure(description: "not an upgrade request: \(head)")
        }
        var answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        answer += "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n"
        if case .permessageDeflate(_, let agreed, _) = negotiation { answer += "Sec-WebSocket-Extensions: \(agreed)\r\n" }
        let answerBytes = Data((answer + "\r\n").utf8)
        if gluesAnswer {
            peer.heldAnswer = answerBytes
        } else {
            _ = try peer.socket.write(answerBytes, cuts: bytewise ? Array(1..<answerBytes.count) : [], before: deadline)
        }
        return peer
    }

    /// A server's 101 answer not written yet: it goes out with the next bytes.
    private var heldAnswer: Data?

    /// The `Sec-WebSocket-Key` of the last head read, as sent (base64 is case-sensitive).
    private var originalKey: String?

    /// Reads an HTTP head up to its empty line, lowercased; bytes after it stay for the frames.
    private func readHead() throws -> String {
        var bytes = Data()
        while true {
            if let end = bytes.range(of: Data("\r\n\r\n".utf8)) {
                let original = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                buffer.append(bytes[end.upperBound...])
                originalKey = original.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                    .map { String($0.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces) }
                return original.lowercased()
            }
            let more = try socket.read(before: deadline)
            guard !more.isEmpty else { throw RawSocket.Failure(description: "closed during the handshake") }
            bytes.append(more)
        }
    }

    /// Writes `frames` back to back, cut as `arrival` says; false when the testee has closed meanwhile.
    func send(_ frames: [FuzzFrame], _ arrival: FuzzArrival) throws -> Bool {
        var bytes = heldAnswer ?? Data()
        heldAnswer = nil
        var cuts: [Int] = []
        var payloadCuts: [Int] = []
        for frame in frames {
            let key = isClient ? WebSocketMaskingKey.random(using: &generator) : nil
            let encoded = frame.encoded(maskingKey: key)
            cuts += encoded.cuts.map { $0 + bytes.count }
            if case .payloadCuts(let offsets) = arrival { payloadCuts += offsets.map { $0 + bytes.count + encoded.payloadStart } }
            bytes.append(encoded.bytes)
            cuts.append(bytes.count)
        }
        switch arrival {
        case .whole: return try socket.write(bytes, before: deadline)
        case .chunks(let size): return try socket.write(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size)), before: deadline)
        case .splitInside: return try socket.write(bytes, cuts: cuts, before: deadline)
        case .payloadCuts: return try socket.write(bytes, cuts: payloadCuts, before: deadline)
        }
    }

    /// Sends `message` (text or binary; a Pong as it is) as ``FuzzStep/message(_:fragmentSize:)`` says;
    /// false when the testee has closed meanwhile.
    func send(message: FuzzReply, fragmentSize: Int?) throws -> Bool {
        let (opcode, payload): (UInt8, Data)
        switch message {
        case .text(let bytes): (opcode, payload) = (0x1, bytes)
        case .binary(let bytes): (opcode, payload) = (0x2, bytes)
        case .pong(let bytes): return try send([FuzzFrame(opcode: 0xA, payload: bytes)], .whole)
        }
        let wire = compressor?.compress(payload) ?? payload
        let size = max(1, fragmentSize ?? max(wire.count, 1))
        let starts = Array(stride(from: 0, to: max(wire.count, 1), by: size))
        let frames = starts.enumerated().map { index, start in
            FuzzFrame(
                fin: index == starts.count - 1, rsv: index == 0 && compressor != nil ? 4 : 0, opcode: index == 0 ? opcode : 0x0,
                payload: wire.subdata(in: min(start, wire.count)..<min(start + size, wire.count)))
        }
        return try send(frames, .whole)
    }

    /// A compressed message's payload (its frames' payloads joined), inflated.
    /// - Throws: when permessage-deflate was not negotiated, or the payload does not inflate.
    func inflate(_ payload: Data) throws -> Data {
        guard let decompressor else { throw RawSocket.Failure(description: "RSV1 without permessage-deflate") }
        do {
            return try decompressor.decompress(payload, maxMessageBytes: 64 << 20)
        } catch {
            throw RawSocket.Failure(description: "the testee's compressed message does not inflate: \(error)")
        }
    }

    /// The testee's next frame, or nil when its stream ended (between frames).
    /// - Throws: when the deadline passes, or the testee's bytes break a frame rule for its role.
    func nextFrame() throws -> WebSocketFrame? {
        if let answer = heldAnswer {
            heldAnswer = nil
            _ = try socket.write(answer, before: deadline)
        }
        while true {
            do {
                if let frame = try decoder.decode(&buffer) { return frame }
            } catch {
                throw RawSocket.Failure(description: "the testee sent a bad frame: \(error)")
            }
            let more = try socket.read(before: deadline)
            guard !more.isEmpty else {
                if buffer.readableBytes > 0 { throw RawSocket.Failure(description: "stream ended inside a frame") }
                return nil
            }
            buffer.append(more)
        }
    }
}
