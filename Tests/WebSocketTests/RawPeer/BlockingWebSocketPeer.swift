import Foundation
import SocketFraming
import TestSupport

/// The raw end of one WebSocket connection, built from SocketFraming's pieces alone on a
/// ``BlockingLoopbackSocket``: the opening handshake done by hand, frames out through
/// `WebSocketFrameEncoder` (masked when it is the client, RFC 6455 §5.3) or as raw bytes, and the other
/// end's frames in through `WebSocketFrameDecoder` in this peer's role (so a server that masks, or a
/// client that does not, is caught). Blocks its thread: use it through `runOnAThread`.
final class BlockingWebSocketPeer {
    /// How long its waits may take: all of them until one instant, or each one for a while.
    enum TimeLimit {
        case until(ContinuousClock.Instant)
        case eachWait(Duration)
    }

    let socket: BlockingLoopbackSocket
    let role: WebSocketRole
    let limit: TimeLimit
    private var decoder: WebSocketFrameDecoder
    private let encoder: WebSocketFrameEncoder
    /// A server's 101 answer not written yet: it goes out with the next bytes.
    private var heldAnswer: Data?

    /// `allowedReservedBits`: the RSV bits an extension agreed on lets the other end set.
    init(socket: BlockingLoopbackSocket, role: WebSocketRole, limit: TimeLimit, allowedReservedBits: WebSocketReservedBits = []) {
        self.socket = socket
        self.role = role
        self.limit = limit
        decoder = WebSocketFrameDecoder(role: role, allowedReservedBits: allowedReservedBits)
        encoder = WebSocketFrameEncoder(role: role)
    }

    var isClient: Bool { role == .client }

    /// When the current wait must end.
    var deadline: ContinuousClock.Instant {
        switch limit {
        case .until(let deadline): return deadline
        case .eachWait(let duration): return .now + duration
        }
    }

    /// A connection's client handshake to the server on `port`, offering `extensions` (none when nil);
    /// `bytewise`: the request is written a byte at a time. Returns the 101's `Sec-WebSocket-Extensions`
    /// ("" when absent) after checking the status and `Sec-WebSocket-Accept`.
    func upgrade(port: UInt16, path: String = "/", extensions: String? = nil, bytewise: Bool = false) throws -> String {
        let key = WebSocketHandshake.randomKey()
        let bytes = Data(RawHandshake.request(host: "127.0.0.1:\(port)", path: path, key: key, extensions: extensions).utf8)
        _ = try socket.write(bytes, cuts: bytewise ? Array(1..<bytes.count) : [], before: deadline)
        let head = try socket.readHead(before: deadline)
        guard head.hasPrefix("HTTP/1.1 101 "),
            RawHandshake.header("Sec-WebSocket-Accept", in: head).map(String.init) == [WebSocketHandshake.acceptValue(forKey: key)]
        else { throw RawPeerError("not an upgrade: \(head)") }
        return RawHandshake.header("Sec-WebSocket-Extensions", in: head).joined(separator: ", ")
    }

    /// A connection's server handshake: reads the request and answers 101 with `extensions` as
    /// `Sec-WebSocket-Extensions` (none when nil). When `gluesAnswer`, the answer is held and written in
    /// one write with the next bytes (frames glued to the 101, as RFC 6455 allows a server); when
    /// `bytewise`, it is written a byte at a time. Returns the request's extension offer (its
    /// `Sec-WebSocket-Extensions` lines joined by ", ", "" when absent).
    func acceptUpgrade(extensions: String? = nil, gluesAnswer: Bool = false, bytewise: Bool = false) throws -> String {
        let head = try socket.readHead(before: deadline)
        guard head.hasPrefix("GET "), let key = RawHandshake.header("Sec-WebSocket-Key", in: head).first.map(String.init) else {
            throw RawPeerError("not an upgrade request: \(head)")
        }
        let bytes = Data(RawHandshake.answer(key: key, extensions: extensions).utf8)
        if gluesAnswer {
            heldAnswer = bytes
        } else {
            _ = try socket.write(bytes, cuts: bytewise ? Array(1..<bytes.count) : [], before: deadline)
        }
        return RawHandshake.header("Sec-WebSocket-Extensions", in: head).joined(separator: ", ")
    }

    /// The held 101 answer (empty when none), which the caller now writes before anything else.
    func takeHeldAnswer() -> Data {
        defer { heldAnswer = nil }
        return heldAnswer ?? Data()
    }

    /// Writes a held 101 answer and then `bytes`, in pieces ending at `cuts` (offsets into the whole);
    /// false when the other end has closed meanwhile.
    func write(_ bytes: Data, cuts: [Int] = []) throws -> Bool {
        try socket.write(takeHeldAnswer() + bytes, cuts: cuts, before: deadline)
    }

    /// Writes `frames` through SocketFraming's encoder, masked by role, in one write.
    /// - Throws: when the other end has closed, or a frame breaks the encoder's rules.
    func send(_ frames: [WebSocketFrame]) throws {
        var wire = Data()
        for frame in frames { try encoder.encode(frame, into: &wire) }
        guard try write(wire) else { throw RawPeerError("the other end closed before the frames were written") }
    }

    /// The other end's next frame, or nil when its stream ended (between frames).
    /// - Throws: when the time limit passes, or the bytes break a frame rule for this peer's role.
    func nextFrame() throws -> WebSocketFrame? {
        if heldAnswer != nil { _ = try write(Data()) }
        while true {
            do {
                if let frame = try decoder.decode(&socket.buffer) { return frame }
            } catch {
                throw RawPeerError("the other end sent a bad frame: \(error)")
            }
            guard try socket.fill(before: deadline) else {
                if socket.buffer.readableBytes > 0 { throw RawPeerError("stream ended inside a frame") }
                return nil
            }
        }
    }
}
