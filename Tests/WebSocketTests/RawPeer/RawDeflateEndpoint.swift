import Foundation
import SocketFraming
import TestSupport

/// One end of a permessage-deflate connection built from SocketFraming's pieces alone
/// (`PerMessageDeflate.Compressor` and `Decompressor`) on a ``BlockingWebSocketPeer`` whose handshake is
/// done: the tester's side of a case, as the Autobahn TestSuite's fuzzing server and client are.
///
/// Its decompressor keeps exactly the agreed window and context mode: a message the WebSocket under test
/// compressed with a larger window, or with context the agreement forbids, fails to inflate here
/// ("invalid distance too far back").
final class RawDeflateEndpoint {
    let peer: BlockingWebSocketPeer
    private let compressor: PerMessageDeflate.Compressor
    private let decompressor: PerMessageDeflate.Decompressor

    /// `peer` must allow RSV1 (`allowedReservedBits: .rsv1`).
    init(peer: BlockingWebSocketPeer, agreement: PerMessageDeflate.Agreement) {
        self.peer = peer
        let deflateRole: PerMessageDeflate.Role = peer.role == .server ? .server : .client
        compressor = PerMessageDeflate.Compressor(agreement: agreement, role: deflateRole)
        decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: deflateRole)
    }

    /// A raw client on a new connection to the server on `port`, offering `offer`, each wait bounded by
    /// a hang's limit (10 s): the peer and the 101's `Sec-WebSocket-Extensions` ("" when absent).
    static func connect(port: UInt16, offer: String) throws -> (peer: BlockingWebSocketPeer, response: String) {
        let peer = BlockingWebSocketPeer(
            socket: try .connect(port: port), role: .client, limit: .eachWait(TestTiming.hangLimit(.seconds(10))),
            allowedReservedBits: .rsv1)
        return (peer, try peer.upgrade(port: port, path: "/deflate", extensions: offer))
    }

    /// A raw server on the next connection to `listening`, answering its offer with `response` (none when
    /// nil), each wait bounded by a hang's limit (10 s): the peer and the request's extension offer.
    static func accept(_ listening: BlockingLoopbackSocket, response: String?) throws -> (peer: BlockingWebSocketPeer, offer: String) {
        let limit = TestTiming.hangLimit(.seconds(10))
        let peer = BlockingWebSocketPeer(
            socket: try listening.accept(before: .now + limit), role: .server, limit: .eachWait(limit), allowedReservedBits: .rsv1)
        return (peer, try peer.acceptUpgrade(extensions: response))
    }

    /// Sends one message compressed (RSV1 on its first frame), its compressed payload cut into frames of
    /// `fragmentSize` bytes (0: one frame), as Autobahn's `autoFragmentSize` does.
    func send(_ opcode: WebSocketOpcode, _ payload: Data, fragmentSize: Int) throws {
        let compressed = compressor.compress(payload)
        let size = fragmentSize > 0 ? fragmentSize : max(compressed.count, 1)
        var frames: [WebSocketFrame] = []
        var start = compressed.startIndex
        repeat {
            let end = min(start + size, compressed.endIndex)
            let first = start == compressed.startIndex
            frames.append(
                WebSocketFrame(
                    fin: end == compressed.endIndex, reservedBits: first ? .rsv1 : [], opcode: first ? opcode : .continuation,
                    payload: compressed[start..<end]))
            start = end
        } while start < compressed.endIndex
        try peer.send(frames)
    }

    /// The next frame from the other end; throws at the end of its stream.
    func nextFrame() throws -> WebSocketFrame {
        guard let frame = try peer.nextFrame() else { throw RawPeerError("the peer closed the connection") }
        return frame
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
        try peer.send([WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8]))])
        let answer = try nextFrame()
        guard answer.opcode == .close, answer.payload.prefix(2) == Data([0x03, 0xE8]) else {
            throw RawPeerError("expected Close 1000, got \(answer)")
        }
        if peer.role == .client, !peer.socket.readsEndOfStream(before: peer.deadline) {
            throw RawPeerError("the server did not close TCP after the close handshake")
        }
    }
}
