import Foundation

/// Autobahn groups 1 (framing), 2 (pings and pongs), 3 (reserved bits) and 4 (opcodes), case by case
/// (`case1_1_1.py` … `case4_2_5.py`).
enum ConformanceCases1To4 {
    static let hello = "Hello, world!"
    /// Why the echo of a message just before a bad frame may be missing (Autobahn's non-strict outcome).
    static let echoRace = "the echo is sent from the delegate queue; a bad frame read in the same batch fails the connection first"
    static let binaryPayload = Data([0x00, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0x00, 0xFF])

    /// 1.1.x text and 1.2.x binary messages of the lengths around the 7-, 16- and 64-bit length
    /// encodings; 1.x.8 is sent in chops of 997 bytes.
    static let framing: [ConformanceCase] = {
        let lengths = [0, 125, 126, 127, 128, 65535, 65536]
        var cases: [ConformanceCase] = []
        for (index, length) in lengths.enumerated() {
            let text = Data(repeating: "*", count: length)
            cases.append(
                ConformanceCase("1.1.\(index + 1)", "text message of \(length) bytes", [.send(.text(bytes: text))], .echo([.text(text)])))
        }
        let long = Data(repeating: "*", count: 65536)
        cases.append(
            ConformanceCase("1.1.8", "text of 65536 bytes in chops of 997", [.send(chop: 997, .text(bytes: long))], .echo([.text(long)])))
        for (index, length) in lengths.enumerated() {
            let data = Data(repeating: 0xFE, count: length)
            cases.append(
                ConformanceCase("1.2.\(index + 1)", "binary message of \(length) bytes", [.send(.binary(data))], .echo([.binary(data)])))
        }
        let data = Data(repeating: 0xFE, count: 65536)
        cases.append(
            ConformanceCase("1.2.8", "binary of 65536 bytes in chops of 997", [.send(chop: 997, .binary(data))], .echo([.binary(data)])))
        return cases
    }()

    static let pings: [ConformanceCase] = {
        let max = Data(repeating: 0xFE, count: 125)
        let pings = (0..<10).map { "payload-\($0)" }
        return [
            ConformanceCase("2.1", "Ping without payload", [.send(.ping())], .echo([.pong("")])),
            ConformanceCase("2.2", "Ping with a text payload", [.send(.ping(hello))], .echo([.pong(hello)])),
            ConformanceCase("2.3", "Ping with a binary payload", [.send(.ping(bytes: binaryPayload))], .echo([.pong(binaryPayload)])),
            ConformanceCase("2.4", "Ping with 125 bytes", [.send(.ping(bytes: max))], .echo([.pong(max)])),
            ConformanceCase("2.5", "Ping with 126 bytes", [.send(.ping(bytes: max + [0xFE]))], .fails(1002)),
            ConformanceCase("2.6", "Ping with 125 bytes, a byte at a time", [.send(chop: 1, .ping(bytes: max))], .echo([.pong(max)])),
            ConformanceCase("2.7", "unsolicited Pong without payload", [.send(.pong())], .echo([])),
            ConformanceCase("2.8", "unsolicited Pong with payload", [.send(.pong("unsolicited pong payload"))], .echo([])),
            ConformanceCase(
                "2.9", "unsolicited Pong, then a Ping", [.send(.pong("unsolicited pong payload"), .ping("ping payload"))],
                .echo([.pong("ping payload")])),
            ConformanceCase("2.10", "10 Pings", [.send(pings.map { .ping($0) }, .whole)], .echo(pings.map { .pong($0) })),
            ConformanceCase(
                "2.11", "10 Pings, a byte at a time", [.send(pings.map { .ping($0) }, .chunks(1))], .echo(pings.map { .pong($0) }))
        ]
    }()

    /// Strict outcome chosen where Autobahn accepts either: the message before the bad frame is echoed
    /// (non-strict: the connection fails before the echo is written).
    static let reservedBits: [ConformanceCase] = [
        ConformanceCase("3.1", "text with RSV = 1", [.send(.text(hello, rsv: 1))], .fails(1002)),
        ConformanceCase(
            "3.2", "text, text with RSV = 2, Ping", [.send(.text(hello), .text(hello, rsv: 2), .ping())],
            .fails(code: 1002, after: [.text(hello)])
        ).acceptingNonStrict([], echoRace),
        ConformanceCase(
            "3.3", "as 3.2 with RSV = 3, frame-wise", [.send(.text(hello)), .send(.text(hello, rsv: 3)), .send(.ping())],
            .fails(code: 1002, after: [.text(hello)])
        ).acceptingNonStrict([], echoRace),
        ConformanceCase(
            "3.4", "as 3.2 with RSV = 4, a byte at a time",
            [.send(chop: 1, .text(hello)), .send(chop: 1, .text(hello, rsv: 4)), .send(chop: 1, .ping())],
            .fails(code: 1002, after: [.text(hello)])
        ).acceptingNonStrict([], echoRace),
        ConformanceCase("3.5", "binary with RSV = 5", [.send(.binary(binaryPayload, rsv: 5))], .fails(1002)),
        ConformanceCase("3.6", "Ping with RSV = 6", [.send(FuzzFrame(rsv: 6, opcode: 0x9, payload: Data(hello.utf8)))], .fails(1002)),
        ConformanceCase("3.7", "Close with RSV = 7", [.send(.close(nil, rsv: 7))], .fails(1002))
    ]

    /// Reserved non-control (3–7, 4.1.x) and control (11–15, 4.2.x) opcodes; strict outcome as in group 3.
    static let opcodes: [ConformanceCase] = [3, 11].flatMap { base -> [ConformanceCase] in
        let group = base == 3 ? "4.1" : "4.2"
        return [
            ConformanceCase("\(group).1", "opcode \(base)", [.send(.opcode(UInt8(base)))], .fails(1002)),
            ConformanceCase(
                "\(group).2", "opcode \(base + 1) with payload", [.send(.opcode(UInt8(base + 1), "reserved opcode payload"))], .fails(1002)),
            ConformanceCase(
                "\(group).3", "text, opcode \(base + 2), Ping", [.send(.text(hello), .opcode(UInt8(base + 2)), .ping())],
                .fails(code: 1002, after: [.text(hello)])
            ).acceptingNonStrict([], ConformanceCases1To4.echoRace),
            ConformanceCase(
                "\(group).4", "text, opcode \(base + 3) with payload, Ping",
                [.send(.text(hello), .opcode(UInt8(base + 3), hello), .ping())],
                .fails(code: 1002, after: [.text(hello)])
            ).acceptingNonStrict([], ConformanceCases1To4.echoRace),
            ConformanceCase(
                "\(group).5", "text, opcode \(base + 4) with payload, Ping, a byte at a time",
                [.send(chop: 1, .text(hello)), .send(chop: 1, .opcode(UInt8(base + 4), hello)), .send(chop: 1, .ping())],
                .fails(code: 1002, after: [.text(hello)])
            ).acceptingNonStrict([], ConformanceCases1To4.echoRace)
        ]
    }
}
