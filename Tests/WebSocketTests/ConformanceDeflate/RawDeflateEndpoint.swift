import Foundation
import SocketFraming
import TestSupport

/// One end of a permessage-deflate connection built from SocketFraming's pieces alone (frame decoder
/// and encoder, `PerMessageDeflate.Compressor` and `Decompressor`), on a ``BlockingLoopbackSocket``: the
/// tester's side of a case, as the Autobahn TestSuite's fuzzing server and client are.
///
/// Its decompressor keeps exactly the agreed window and context mode: a message the WebSocket under test
/// compressed with a larger window, or with context the agreement forbids, fails to inflate here
/// ("invalid distance too far back").
final class RawDeflateEndpoint {
    let socket: BlockingLoopbackSocket
    let role: WebSocketRole
    private var decoder: WebSocketFrameDecoder
    private let encoder: WebSocketFrameEncoder
    private let compressor: PerMessageDeflate.Compressor
    private let decompressor: PerMessageDeflate.Decompressor

    init(socket: BlockingLoopbackSocket, role: WebSocketRole, agreement: PerMessageDeflate.Agreement) {
        self.socket = socket
        self.role = role
        let deflateRole: PerMessageDeflate.Role = role == .server ? .server : .client
        decoder = WebSocketFrameDecoder(role: role, allowedReservedBits: .rsv1)
        encoder = WebSocketFrameEncoder(role: role)
        compressor = PerMessageDeflate.Compressor(agreement: agreement, role: deflateRole)
        decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: deflateRole)
    }

    /// Sends one message compressed (RSV1 on its first frame), its compressed payload cut into frames of
    /// `fragmentSize` bytes (0: one frame), as Autobahn's `autoFragmentSize` does.
    func send(_ opcode: WebSocketOpcode, _ payload: Data, fragmentSize: Int) throws {
        let compressed = compressor.compress(payload)
        let size = fragmentSize > 0 ? fragmentSize : max(compressed.count, 1)
        var wire = Data()
        var start = compressed.startIndex
        repeat {
            let end = min(start + size, compressed.endIndex)
            let first = start == compressed.startIndex
            let frame = WebSocketFrame(
                fin: end == compressed.endIndex, reservedBits: first ? .rsv1 : [], opcode: first ? opcode : .continuation,
                payload: compressed[start..<end])
            try encoder.encode(frame, into: &wire)
            start = end
        } while start < compressed.endIndex
        try socket.write(wire)
    }

    /// The next frame from the peer.
    func nextFrame() throws -> WebSocketFrame {
        while true {
            if let frame = try decoder.decode(&socket.buffer) { return frame }
            try socket.fill()
        }
    }

    /// The next data message, inflated; throws unless every message arrives compressed (RSV1 on its first
    /// frame only) and whole before any other frame.
    func receive() throws -> (opcode: WebSocketOpcode, payload: Data) {
        let first = try nextFrame()
        guard first.opcode == .text || first.opcode == .binary else { throw RawPeerError("expected a data frame, got \(first)") }
        guard first.rsv1 else { throw RawPeerError("a message arrived uncompressed (RSV1 clear)") }
        var frame = first
        var payload = Data()
        while true {
            payload.append(try decompressor.decompress(fragment: frame.payload, isFinal: frame.fin, maxMessageBytes: 1 << 24))
            if frame.fin { return (first.opcode, payload) }
            frame = try nextFrame()
            guard frame.opcode == .continuation, !frame.rsv1 else { throw RawPeerError("expected a continuation, got \(frame)") }
        }
    }

    /// Starts the close handshake with 1000 and checks the peer's answer is a Close 1000 (Autobahn's
    /// `closedByMe`, `requireClean`); a client then waits for the server to end TCP (RFC 6455 §7.1.1).
    func closeNormally() throws {
        try socket.write(try encoder.encode(WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8]))))
        let answer = try nextFrame()
        guard answer.opcode == .close, answer.payload.prefix(2) == Data([0x03, 0xE8]) else {
            throw RawPeerError("expected Close 1000, got \(answer)")
        }
        if role == .client, !socket.readsEndOfStream() { throw RawPeerError("the server did not close TCP after the close handshake") }
    }
}

extension RawDeflateEndpoint {
    /// A server's opening handshake on `socket`: reads the request, answers 101 with `response` as
    /// `Sec-WebSocket-Extensions` (none when nil), and returns the request's extension offer (its
    /// `Sec-WebSocket-Extensions` lines joined by ", ", "" when absent).
    static func acceptUpgrade(on socket: BlockingLoopbackSocket, response: String?) throws -> String {
        let head = try socket.readHead()
        let key = header("Sec-WebSocket-Key", in: head).first.map(String.init)
        guard let key else { throw RawPeerError("no Sec-WebSocket-Key in \(head)") }
        var answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        answer += "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n"
        if let response { answer += "Sec-WebSocket-Extensions: \(response)\r\n" }
        try socket.write(Data((answer + "\r\n").utf8))
        return header("Sec-WebSocket-Extensions", in: head).joined(separator: ", ")
    }

    /// A client's opening handshake on `socket` offering `offer`: returns the 101's
    /// `Sec-WebSocket-Extensions` ("" when absent) after checking the status and `Sec-WebSocket-Accept`.
    static func upgrade(on socket: BlockingLoopbackSocket, port: UInt16, offer: String) throws -> String {
        let key = WebSocketHandshake.randomKey()
        let request =
            "GET /deflate HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: \(offer)\r\n\r\n"
        try socket.write(Data(request.utf8))
        let head = try socket.readHead()
        guard head.hasPrefix("HTTP/1.1 101 "),
            header("Sec-WebSocket-Accept", in: head).map(String.init) == [WebSocketHandshake.acceptValue(forKey: key)]
        else { throw RawPeerError("not accepted: \(head)") }
        return header("Sec-WebSocket-Extensions", in: head).joined(separator: ", ")
    }

    /// The values of every `name` header line in `head` (case-insensitive name, value trimmed).
    static func header(_ name: String, in head: String) -> [Substring] {
        head.split(separator: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { return nil }
            return line[line.index(after: colon)...].drop { $0 == " " }
        }
    }
}
