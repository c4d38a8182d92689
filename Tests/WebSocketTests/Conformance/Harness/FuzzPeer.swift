import Foundation
import SocketFraming

/// The fuzzing end of one connection: a ``BlockingWebSocketPeer`` whose case runs until one deadline,
/// writing crafted ``FuzzFrame``s (masked with a fresh key when it is the client) cut as a case says.
extension BlockingWebSocketPeer {
    /// A fuzzing client on a new connection to the testee server on `port`, its handshake done.
    /// `bytewise`: the request is written a byte at a time.
    static func fuzzingClient(port: UInt16, bytewise: Bool = false, deadline: ContinuousClock.Instant) throws -> BlockingWebSocketPeer {
        let peer = BlockingWebSocketPeer(socket: try .connect(port: port), role: .client, limit: .until(deadline))
        _ = try peer.upgrade(port: port, bytewise: bytewise)
        return peer
    }

    /// The fuzzing server's side of a connection the testee client opened on `listening`, its handshake
    /// answered (see ``acceptUpgrade(extensions:gluesAnswer:bytewise:)``).
    static func fuzzingServer(
        accepting listening: BlockingLoopbackSocket, gluesAnswer: Bool = false, bytewise: Bool = false, deadline: ContinuousClock.Instant
    ) throws -> BlockingWebSocketPeer {
        let peer = BlockingWebSocketPeer(socket: try listening.accept(before: deadline), role: .server, limit: .until(deadline))
        _ = try peer.acceptUpgrade(gluesAnswer: gluesAnswer, bytewise: bytewise)
        return peer
    }

    /// Writes `frames` back to back, cut as `arrival` says; false when the testee has closed meanwhile.
    func send(_ frames: [FuzzFrame], _ arrival: FuzzArrival) throws -> Bool {
        var bytes = takeHeldAnswer()
        var generator = SystemRandomNumberGenerator()
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
        case .whole: return try write(bytes)
        case .chunks(let size): return try write(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size)))
        case .splitInside: return try write(bytes, cuts: cuts)
        case .payloadCuts: return try write(bytes, cuts: payloadCuts)
        }
    }
}
