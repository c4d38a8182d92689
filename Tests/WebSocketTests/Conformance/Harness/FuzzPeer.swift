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

    private init(socket: RawSocket, isClient: Bool, deadline: ContinuousClock.Instant) {
        self.socket = socket
        self.isClient = isClient
        self.deadline = deadline
        decoder = WebSocketFrameDecoder(role: isClient ? .client : .server)
    }

    /// A fuzzing client on a new connection to the testee server on `port`, its handshake done.
    static func client(port: UInt16, negotiation: ConformanceNegotiation, deadline: ContinuousClock.Instant) throws -> FuzzPeer {
        let peer = FuzzPeer(socket: try RawSocket.connect(port: port), isClient: true, deadline: deadline)
        let key = WebSocketHandshake.randomKey()
        var request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if case .extensions(let offer, _) = negotiation { request += "Sec-WebSocket-Extensions: \(offer)\r\n" }
        _ = try peer.socket.write(Data((request + "\r\n").utf8), before: deadline)
        let head = try peer.readHead()
        let accept = "sec-websocket-accept: \(WebSocketHandshake.acceptValue(forKey: key).lowercased())"
        guard head.hasPrefix("http/1.1 101 "), head.contains(accept) else {
            throw RawSocket.Failure(description: "not an upgrade: \(head)")
        }
        if case .extensions(_, let answer) = negotiation, !head.contains("sec-websocket-extensions: \(answer.lowercased())") {
            throw RawSocket.Failure(description: "extensions not answered with \(answer): \(head)")
        }
        return peer
    }

    /// The fuzzing server's side of a connection the testee client opened on `listening`, its handshake
    /// answered.
    static func server(
        accepting listening: RawSocket, negotiation: ConformanceNegotiation, deadline: ContinuousClock.Instant
    ) throws -> FuzzPeer {
        let peer = FuzzPeer(socket: try listening.accept(before: deadline), isClient: false, deadline: deadline)
        let head = try peer.readHead()
        guard head.hasPrefix("get "), let key = peer.originalKey else {
            throw RawSocket.Failure(description: "not an upgrade request: \(head)")
        }
        var answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        answer += "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n"
        if case .extensions(_, let agreed) = negotiation { answer += "Sec-WebSocket-Extensions: \(agreed)\r\n" }
        _ = try peer.socket.write(Data((answer + "\r\n").utf8), before: deadline)
        return peer
    }

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
        var bytes = Data()
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

    /// The testee's next frame, or nil when its stream ended (between frames).
    /// - Throws: when the deadline passes, or the testee's bytes break a frame rule for its role.
    func nextFrame() throws -> WebSocketFrame? {
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
