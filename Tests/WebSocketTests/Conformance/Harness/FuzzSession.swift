import Foundation
import SocketFraming

/// The fuzzer's side of one case while it runs: what it has received so far.
struct FuzzSession {
    let peer: BlockingWebSocketPeer
    var replies: [FuzzReply] = []
    var close: WebSocketFrame?
    var ended = false
    var problems: [String] = []
    private var syncs = 0

    init(peer: BlockingWebSocketPeer) { self.peer = peer }

    /// Performs `steps` until they are done or the testee has closed.
    mutating func perform(_ steps: [FuzzStep]) throws {
        for (index, step) in steps.enumerated() {
            switch step {
            case .send(let frames, let arrival): guard try peer.send(frames, arrival) else { return }
            case .awaitReply: guard try receive() else { return }
            case .sync, .expectFailure:
                syncs += 1
                let payload = Data("sync \(syncs)".utf8)
                guard try peer.send([.ping(bytes: payload)], .whole) else { return }
                while true {
                    guard let frame = try peer.nextFrame() else {
                        ended = true
                        return
                    }
                    if frame.opcode == .pong && frame.payload == payload {
                        if case .expectFailure = step { problems.append("still open after step \(index): not failed fast") }
                        break
                    }
                    guard try take(frame) else { return }
                }
            }
        }
    }

    /// Reads until `count` replies have arrived, or the Close, or the end.
    mutating func readReplies(upTo count: Int) throws {
        while replies.count < count, close == nil, !ended {
            guard try receive() else { return }
        }
    }

    /// Reads until the testee's Close (or the end of its stream).
    mutating func readUntilClose() throws {
        while close == nil, !ended {
            guard try receive() else { return }
        }
    }

    /// Reads one frame; false once the Close or the end has come.
    private mutating func receive() throws -> Bool {
        guard let frame = try peer.nextFrame() else {
            ended = true
            return false
        }
        return try take(frame)
    }

    /// Keeps `frame`; false when it is the Close.
    private mutating func take(_ frame: WebSocketFrame) throws -> Bool {
        switch frame.opcode {
        case .close:
            close = frame
            return false
        case .text: replies.append(.text(frame.payload))
        case .binary: replies.append(.binary(frame.payload))
        case .pong: replies.append(.pong(frame.payload))
        case .ping: problems.append("an unexpected Ping \(FuzzFrame.summary(frame.payload))")
        case .continuation:
            switch replies.popLast() {
            case .text(let head)?: replies.append(.text(head + frame.payload))
            case .binary(let head)?: replies.append(.binary(head + frame.payload))
            default: problems.append("a continuation frame with no message")
            }
        }
        return true
    }
}
