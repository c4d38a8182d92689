import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A hostile client on the library's own ``TCPSocket`` (its writes queue, so it can write more than the
/// server reads): does the opening handshake, then writes whatever bytes a test gives it (frames built by
/// ``frame(_:_:key:)``, or not frames at all) and reads the server's frames with SocketFraming's decoder
/// in the client's role. For a blocking peer on a plain socket, see ``BlockingWebSocketPeer``.
final class RawWebSocketPeer {
    let socket: TCPSocket
    let recorder = RecordingDelegate()
    private var nextTag = 100
    /// The server's bytes read and not yet decoded.
    private var buffer = FrameBuffer()
    private var decoder: WebSocketFrameDecoder

    /// Connects to `port` on 127.0.0.1 and upgrades (`extensions`: a `Sec-WebSocket-Extensions` offer).
    /// Returns with the server's 101 answer read.
    init(port: UInt16, extensions: String? = nil, group: EventLoopGroup = .shared) async throws {
        socket = TCPSocket(delegate: recorder, delegateQueue: nil, group: group)
        decoder = WebSocketFrameDecoder(role: .client, allowedReservedBits: extensions == nil ? [] : .rsv1)
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: TestTiming.hangTimeout(10))
        _ = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .connected = $0 { return true }
            return false
        }
        write(
            Array(RawHandshake.request(host: "127.0.0.1", path: "/chat", key: "dGhlIHNhbXBsZSBub25jZQ==", extensions: extensions).utf8))
        let head = try await read(until: Array("\r\n\r\n".utf8))
        let text = String(decoding: head, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 "), "answer: \(text)")
    }

    func write(_ bytes: [UInt8]) {
        nextTag += 1
        socket.write(Data(bytes), withTimeout: -1, tag: nextTag)
    }

    func read(until separator: [UInt8]) async throws -> [UInt8] {
        nextTag += 1
        socket.readData(to: Data(separator), withTimeout: TestTiming.hangTimeout(10), tag: nextTag)
        return try await result(of: nextTag)
    }

    /// The data of read `tag`, skipping other events (the writes' completions).
    private func result(of tag: Int) async throws -> [UInt8] {
        let event = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            switch $0 {
            case .read(_, tag: tag), .disconnected: return true
            default: return false
            }
        }
        guard case .read(let data, _) = event else { throw RawPeerError("disconnected: \(event)") }
        return Array(data)
    }

    /// The server's next frame: its first byte (FIN, RSV, opcode) and payload.
    /// - Throws: when the server's bytes break a frame rule for a client to receive (a masked frame
    ///   among them), or it disconnects first.
    func readFrame() async throws -> (first: UInt8, payload: [UInt8]) {
        while true {
            if let frame = try decoder.decode(&buffer) {
                return ((frame.fin ? 0x80 : 0) | frame.reservedBits.rawValue | frame.opcode.rawValue, Array(frame.payload))
            }
            nextTag += 1
            socket.readData(withTimeout: TestTiming.hangTimeout(10), tag: nextTag)
            buffer.append(Data(try await result(of: nextTag)))
        }
    }

    /// The server's Close frame as "CODE reason" ("none" without a body), then TCP's end.
    func readClose() async throws -> String {
        let frame = try await readFrame()
        #expect(frame.first == 0x88)
        guard frame.payload.count >= 2 else { return "none" }
        let code = Int(frame.payload[0]) << 8 | Int(frame.payload[1])
        return "\(code) \(String(decoding: frame.payload.dropFirst(2), as: UTF8.self))"
    }

    /// Waits for TCP's end.
    func disconnected() async throws {
        _ = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .disconnected = $0 { return true }
            return false
        }
    }

    func close() { socket.disconnect() }

    /// A client frame: `first` (FIN, RSV, opcode), the length in its minimal encoding, masked with `key`
    /// (``FuzzFrame``'s encoding: any opcode, bits and length, rules or not).
    static func frame(_ first: UInt8, _ payload: [UInt8], key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        let frame = FuzzFrame(fin: first & 0x80 != 0, rsv: first >> 4 & 7, opcode: first & 0x0F, payload: Data(payload))
        return Array(frame.encoded(maskingKey: WebSocketMaskingKey(key[0], key[1], key[2], key[3])).bytes)
    }

    /// A Close frame's payload: `code` big-endian, then `reason`'s bytes.
    static func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        Array(FuzzFrame.closePayload(code)) + reason
    }
}
