import Foundation

/// Autobahn groups 9 (limits and performance, `case9_1_1.py` … `case9_7_X.py`) and 10 (auto-fragmentation,
/// `case10_1_1.py`). Group 9's sizes are Autobahn's divided by ``scale`` (and 9.7/9.8's message counts too)
/// so that the group runs in a few seconds in a debug build on a loaded machine: the
/// cases keep their shape (lengths of all three encodings, fragment and write sizes as Autobahn's), not
/// their volume. Autobahn's `9.9.1` is commented out of its own case list and is not here.
enum ConformanceCases9And10 {
    /// Group 9's message sizes are Autobahn's divided by this.
    static let scale = 32
    /// 9.7.x and 9.8.x send this many messages: Autobahn's 1,000 divided by ``scale``.
    static let messageCount = 1_000 / scale

    static let mebibyte = 1 << 20

    static let limits: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        let sizes = [64 * 1024, 256 * 1024, mebibyte, 4 * mebibyte, 8 * mebibyte, 16 * mebibyte]
        for (index, size) in sizes.enumerated() {
            let text = Data(repeating: "BAsd7&jh23", count: size / scale)
            cases.append(
                ConformanceCase(
                    "9.1.\(index + 1)", "text of \(size / scale) bytes (\(size) ÷ \(scale))", [.send(.text(bytes: text))],
                    .echo([.text(text)])))
        }
        for (index, size) in sizes.enumerated() {
            let data = Data(repeating: [0x00, 0xFE, 0x23, 0xFA, 0xF0], count: size / scale)
            cases.append(
                ConformanceCase(
                    "9.2.\(index + 1)", "binary of \(size / scale) bytes (\(size) ÷ \(scale))", [.send(.binary(data))],
                    .echo([.binary(data)])))
        }
        let fragmentSizes = [64, 256, 1024, 4096, 16 * 1024, 64 * 1024, 256 * 1024, mebibyte, 4 * mebibyte]
        let messageSize = 4 * mebibyte / scale
        for (index, fragment) in fragmentSizes.enumerated() {
            let text = Data(repeating: "*", count: messageSize)
            cases.append(
                ConformanceCase(
                    "9.3.\(index + 1)", "text of \(messageSize) bytes in fragments of \(fragment)",
                    [.send(ConformanceCases6.fragments(text, size: fragment), .whole)], .echo([.text(text)])))
        }
        for (index, fragment) in fragmentSizes.enumerated() {
            let data = Data(repeating: 0xFE, count: messageSize)
            var frames = ConformanceCases6.fragments(data, size: fragment)
            frames[0].opcode = 0x2
            cases.append(
                ConformanceCase(
                    "9.4.\(index + 1)", "binary of \(messageSize) bytes in fragments of \(fragment)", [.send(frames, .whole)],
                    .echo([.binary(data)])))
        }
        let chops = [64, 128, 256, 512, 1024, 2048]
        let chopped = mebibyte / scale
        for (index, chop) in chops.enumerated() {
            let text = Data(repeating: "BAsd7&jh23", count: chopped)
            cases.append(
                ConformanceCase(
                    "9.5.\(index + 1)", "text of \(chopped) bytes in writes of \(chop)", [.send([.text(bytes: text)], .chunks(chop))],
                    .echo([.text(text)])))
        }
        for (index, chop) in chops.enumerated() {
            let data = Data(repeating: [0x00, 0xFE, 0x23, 0xFA, 0xF0], count: chopped)
            cases.append(
                ConformanceCase(
                    "9.6.\(index + 1)", "binary of \(chopped) bytes in writes of \(chop)", [.send([.binary(data)], .chunks(chop))],
                    .echo([.binary(data)])))
        }
        // 9.7.x (text) and 9.8.x (binary): messages one at a time, each sent once the last was echoed.
        for (group, binary) in [("9.7", false), ("9.8", true)] {
            for (index, length) in [0, 16, 64, 256, 1024, 4096].enumerated() {
                let frame: FuzzFrame =
                    binary ? .binary(Data(repeating: 0xFE, count: length)) : .text(bytes: Data(repeating: "*", count: length))
                let reply: FuzzReply = binary ? .binary(frame.payload) : .text(frame.payload)
                let steps = Array(repeating: [FuzzStep.send([frame], .whole), .awaitReply], count: messageCount).flatMap { $0 }
                cases.append(
                    ConformanceCase(
                        "\(group).\(index + 1)", "\(messageCount) \(binary ? "binary" : "text") messages of \(length) bytes, one at a time",
                        steps, .echo(Array(repeating: reply, count: messageCount))))
            }
        }
        return cases
    }()

    /// 10.1.1: a message of 65536 bytes sent as fragments of 1300 (Autobahn's `autoFragmentSize`).
    static let autoFragmentation: [ConformanceCase] = {
        let text = Data(repeating: "*", count: 65536)
        return [
            ConformanceCase(
                "10.1.1", "text of 65536 bytes auto-fragmented to 1300", [.send(ConformanceCases6.fragments(text, size: 1300), .whole)],
                .echo([.text(text)]))
        ]
    }()
}
