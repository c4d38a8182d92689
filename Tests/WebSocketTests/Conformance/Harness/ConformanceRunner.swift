import Dispatch
import Foundation
import SocketFraming
import TestSupport

/// Which of our two ends a run tests.
enum ConformanceTestee: String, Sendable, CaseIterable {
    /// `WebSocketListener`'s connections, the fuzzer a raw client.
    case server
    /// `WebSocket(client:)`, the fuzzer a raw server.
    case client
}

/// Runs conformance cases one after the other, each on a new connection, and says what went wrong.
/// Blocks its thread (raw sockets, semaphores): call it through `runOnAThread`, never on the pool.
enum ConformanceRunner {
    /// The problems of each case that had any, by the case's position in `cases`.
    /// `gluesAnswer`: a fuzzing server writes its 101 answer and the first frames in one write;
    /// `bytewiseHandshake`: the fuzzer writes its request or answer a byte at a time.
    static func run(
        _ cases: [ConformanceCase], against testee: ConformanceTestee, gluesAnswer: Bool = false, bytewiseHandshake: Bool = false
    ) -> [Int: [String]] {
        var problems: [Int: [String]] = [:]
        do {
            switch testee {
            case .server:
                let server = EchoServerTestee()
                let port = try server.start()
                defer { server.stop() }
                for (index, conformanceCase) in cases.enumerated() {
                    let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(10))
                    do {
                        let peer = try BlockingWebSocketPeer.fuzzingClient(port: port, bytewise: bytewiseHandshake, deadline: deadline)
                        defer { peer.socket.close() }
                        let testee = try server.connection(index, before: deadline)
                        problems[index] = try play(conformanceCase, on: peer, testee: testee)
                    } catch {
                        problems[index] = ["\(error)"]
                    }
                }
            case .client:
                let (listening, port) = try BlockingLoopbackSocket.listen()
                let queue = DispatchQueue(label: "conformance-client")
                for (index, conformanceCase) in cases.enumerated() {
                    let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(10))
                    let testee = EchoClientTestee(queue: queue)
                    do {
                        try testee.webSocket.connect(to: "ws://127.0.0.1:\(port)/")
                        let peer = try BlockingWebSocketPeer.fuzzingServer(
                            accepting: listening, gluesAnswer: gluesAnswer, bytewise: bytewiseHandshake, deadline: deadline)
                        defer { peer.socket.close() }
                        problems[index] = try play(conformanceCase, on: peer, testee: testee.connection)
                    } catch {
                        testee.webSocket.close()
                        problems[index] = ["\(error)"]
                    }
                }
            }
        } catch {
            for index in cases.indices { problems[index] = ["could not start: \(error)"] }
        }
        return problems.filter { !$0.value.isEmpty }
    }

    /// Plays one case on `peer` and checks the testee's answers, its Close, the end of TCP and what the
    /// testee reported.
    private static func play(_ conformanceCase: ConformanceCase, on peer: BlockingWebSocketPeer, testee: EchoConnection) throws -> [String]
    {
        var session = FuzzSession(peer: peer)
        try session.perform(conformanceCase.steps)
        let expectedReplies: [FuzzReply]
        let expectedClose: (payload: Data?, code: UInt16, reason: String?, clean: Bool)
        switch conformanceCase.expected {
        case .echo(let replies):
            expectedReplies = replies
            try session.readReplies(upTo: replies.count)
            if session.close == nil && !session.ended { _ = try peer.send([.close(1000)], .whole) }
            expectedClose = (FuzzFrame.closePayload(1000), 1000, "", true)
        case .closes(let replies, let answer, let code, let reason):
            expectedReplies = replies
            expectedClose = (answer, code ?? 1005, reason, true)
        case .fails(let code, let replies):
            expectedReplies = replies
            expectedClose = (nil, code, nil, false)
        }
        try session.readUntilClose()
        var problems = session.problems
        if session.replies != expectedReplies && !conformanceCase.nonStrict.contains(where: { $0.replies == session.replies }) {
            problems.append("replies \(session.replies), expected \(expectedReplies)")
        }
        if let close = session.close {
            if close.payload.count > 2 && !UTF8Validator.isValid(close.payload.dropFirst(2)) {
                problems.append("a close reason that is not UTF-8: \(FuzzFrame.summary(close.payload))")
            }
            let code =
                close.payload.count >= 2
                ? UInt16(close.payload[close.payload.startIndex]) << 8 | UInt16(close.payload[close.payload.startIndex + 1]) : nil
            if let payload = expectedClose.payload, close.payload != payload {
                problems.append("Close \(FuzzFrame.summary(close.payload)), expected \(FuzzFrame.summary(payload))")
            } else if expectedClose.payload == nil && code != expectedClose.code {
                problems.append("Close with code \(code.map(String.init) ?? "none"), expected \(expectedClose.code)")
            }
        } else {
            problems.append("no Close from the testee (expected \(expectedClose.code))")
        }
        // TCP: the testee server closes it once the Close frames crossed, and a testee client that failed
        // the connection; a testee client waits for the fuzzing server to.
        if peer.isClient || !expectedClose.clean {
            if session.close != nil && !session.ended, let extra = try peer.nextFrame() {
                problems.append("a frame after the Close: \(extra)")
            }
        }
        peer.socket.close()
        switch testee.closeResult(before: peer.deadline) {
        case .success(let result):
            if result.code.rawValue != expectedClose.code || result.wasClean != expectedClose.clean
                || (expectedClose.reason.map { $0 != result.reason } ?? false)
            {
                problems.append(
                    "the testee reported \(result), expected \(expectedClose.code) \(expectedClose.reason.map { "\"\($0)\" " } ?? "")(\(expectedClose.clean ? "clean" : "not clean"))"
                )
            }
        case .failure(let failure): problems.append(failure.description)
        }
        return problems
    }
}
