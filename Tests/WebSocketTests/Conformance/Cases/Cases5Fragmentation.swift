import Foundation

/// Autobahn group 5, fragmentation (`case5_1.py` … `case5_20.py`). "Frame-wise" (Autobahn's `sync`) is one
/// write a frame; Autobahn's one-second waits are our `.sync` barriers.
enum ConformanceCases5 {
    static let hello = "Hello, world!"

    static let fragmentation: [ConformanceCase] = {
        let ping = "ping payload"
        var cases: [ConformanceCase] = [
            ConformanceCase(
                "5.1", "Ping in 2 fragments", [.send(.ping("fragment1", fin: false), .continuation("fragment2", fin: true))], .fails(1002)),
            ConformanceCase(
                "5.2", "Pong in 2 fragments", [.send(.pong("fragment1", fin: false), .continuation("fragment2", fin: true))], .fails(1002)),
            ConformanceCase(
                "5.3", "text in 2 fragments", [.send(.text("fragment1", fin: false), .continuation("fragment2", fin: true))],
                .echo([.text("fragment1fragment2")])),
            ConformanceCase(
                "5.4", "text in 2 fragments, frame-wise",
                [.send(.text("fragment1", fin: false)), .send(.continuation("fragment2", fin: true))],
                .echo([.text("fragment1fragment2")])),
            ConformanceCase(
                "5.5", "text in 2 fragments, a byte at a time",
                [.send(chop: 1, .text("fragment1", fin: false)), .send(chop: 1, .continuation("fragment2", fin: true))],
                .echo([.text("fragment1fragment2")])),
            ConformanceCase(
                "5.6", "text in 2 fragments, a Ping between",
                [.send(.text("fragment1", fin: false), .ping(ping), .continuation("fragment2", fin: true))],
                .echo([.pong(ping), .text("fragment1fragment2")])),
            ConformanceCase(
                "5.7", "as 5.6, frame-wise",
                [.send(.text("fragment1", fin: false)), .send(.ping(ping)), .send(.continuation("fragment2", fin: true))],
                .echo([.pong(ping), .text("fragment1fragment2")])),
            ConformanceCase(
                "5.8", "as 5.6, a byte at a time",
                [
                    .send(chop: 1, .text("fragment1", fin: false)), .send(chop: 1, .ping(ping)),
                    .send(chop: 1, .continuation("fragment2", fin: true))
                ],
                .echo([.pong(ping), .text("fragment1fragment2")]))
        ]
        // 5.9–5.14: a continuation with nothing to continue (FIN set, then not), then a text message.
        for (offset, fin) in [(9, true), (12, false)] {
            let first = FuzzFrame.continuation("non-continuation payload", fin: fin)
            cases += [
                ConformanceCase(
                    "5.\(offset)", "continuation (FIN \(fin)) with nothing to continue", [.send(first, .text(hello))], .fails(1002)),
                ConformanceCase("5.\(offset + 1)", "as 5.\(offset), frame-wise", [.send(first), .send(.text(hello))], .fails(1002)),
                ConformanceCase(
                    "5.\(offset + 2)", "as 5.\(offset), a byte at a time", [.send(chop: 1, first), .send(chop: 1, .text(hello))],
                    .fails(1002))
            ]
        }
        let messageThenStray: [FuzzFrame] = [
            .text("fragment1", fin: false), .continuation("fragment2", fin: true), .continuation("fragment3", fin: false),
            .text("fragment4")
        ]
        // Strict: the whole message before the stray continuation is echoed (non-strict: not).
        cases.append(
            ConformanceCase(
                "5.15", "a message, then a continuation with nothing to continue", [.send(messageThenStray, .whole)],
                .fails(code: 1002, after: [.text("fragment1fragment2")])
            ).acceptingNonStrict([], ConformanceCases1To4.echoRace))
        for (id, fin) in [("5.16", false), ("5.17", true)] {
            let round: [FuzzFrame] = [
                .continuation("fragment1", fin: fin), .text("fragment2", fin: false), .continuation("fragment3", fin: true)
            ]
            cases.append(
                ConformanceCase(
                    id, "2x: continuation (FIN \(fin)) with nothing to continue, then a message", [.send(round + round, .whole)],
                    .fails(1002)))
        }
        cases.append(
            ConformanceCase(
                "5.18", "2 fragments, both with opcode text", [.send(.text("fragment1", fin: false), .text("fragment2"))], .fails(1002)))
        let fragments = (1...5).map { "fragment\($0)" }
        for (id, frameWise) in [("5.19", false), ("5.20", true)] {
            let first: [FuzzFrame] = [.text(fragments[0], fin: false), .continuation(fragments[1], fin: false), .ping("pongme 1!")]
            let second: [FuzzFrame] = [
                .continuation(fragments[2], fin: false), .continuation(fragments[3], fin: false), .ping("pongme 2!"),
                .continuation(fragments[4], fin: true)
            ]
            let steps: [FuzzStep] =
                frameWise
                ? first.map { .send([$0], .whole) } + [.sync] + second.map { .send([$0], .whole) }
                : [.send(first, .whole), .sync, .send(second, .whole)]
            cases.append(
                ConformanceCase(
                    id, "5 fragments with 2 Pings between\(frameWise ? ", frame-wise" : "")", steps,
                    .echo([.pong("pongme 1!"), .pong("pongme 2!"), .text(fragments.joined())])))
        }
        return cases
    }()
}
