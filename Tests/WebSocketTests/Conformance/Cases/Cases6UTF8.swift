import Foundation

/// Autobahn group 6, UTF-8 handling (`case6_1_1.py` … `case6_4_4.py`, `case6_x_x.py`).
enum ConformanceCases6 {
    static let mixed = "Hello-µ@ßöäüàá-UTF-8!!"
    static let kosme = Data(hex: UTF8Sequences.kosme)
    /// κόσμε, a surrogate (invalid), "edited": 6.3.x.
    static let invalid = kosme + Data(hex: "eda080") + Data("edited".utf8)
    /// κόσμε, F4 90 80 80 (U+110000, invalid at its second byte, byte 12 of the message), "edited": 6.4.x.
    static let outOfRange = kosme + Data(hex: "f4908080") + Data("edited".utf8)

    /// The message `bytes` as text frames of `size` bytes each.
    static func fragments(_ bytes: Data, size: Int) -> [FuzzFrame] {
        let starts = Array(stride(from: 0, to: bytes.count, by: size))
        return starts.enumerated().map { index, start in
            let piece = bytes.subdata(in: start..<min(start + size, bytes.count))
            let fin = index == starts.count - 1
            return index == 0 ? .text(bytes: piece, fin: fin) : .continuation(bytes: piece, fin: fin)
        }
    }

    static let utf8: [ConformanceCase] = {
        let mixedBytes = Data(mixed.utf8)
        var cases: [ConformanceCase] = [
            ConformanceCase("6.1.1", "text of length 0", [.send(.text(""))], .echo([.text("")])),
            ConformanceCase(
                "6.1.2", "3 empty fragments", [.send(.text("", fin: false), .continuation("", fin: false), .continuation("", fin: true))],
                .echo([.text("")])),
            ConformanceCase(
                "6.1.3", "3 fragments, only the middle one with bytes",
                [.send(.text("", fin: false), .continuation("middle frame payload", fin: false), .continuation("", fin: true))],
                .echo([.text("middle frame payload")])),
            ConformanceCase("6.2.1", "valid UTF-8 in one frame", [.send(.text(mixed))], .echo([.text(mixed)])),
            ConformanceCase(
                "6.2.2", "valid UTF-8 in 2 fragments cut between characters",
                [.send(.text("Hello-µ@ßöä", fin: false), .continuation("üàá-UTF-8!!", fin: true))], .echo([.text(mixed)])),
            ConformanceCase(
                "6.2.3", "valid UTF-8 in fragments of 1 byte", [.send(fragments(mixedBytes, size: 1), .whole)], .echo([.text(mixed)])),
            ConformanceCase("6.2.4", "κόσμε in fragments of 1 byte", [.send(fragments(kosme, size: 1), .whole)], .echo([.text(kosme)])),
            ConformanceCase("6.3.1", "invalid UTF-8 in one frame", [.send(.text(bytes: invalid))], .fails(1007)),
            ConformanceCase("6.3.2", "invalid UTF-8 in fragments of 1 byte", [.send(fragments(invalid, size: 1), .whole)], .fails(1007)),
            // Fail fast across fragments (strict): the Close comes before the third fragment is sent.
            ConformanceCase(
                "6.4.1", "3 fragments, the 2nd makes it invalid: fail before the 3rd",
                [
                    .send(.text(bytes: kosme, fin: false)), .sync, .send(.continuation(bytes: Data(hex: "f4908080"), fin: false)),
                    .expectFailure,
                    .send(.continuation("edited", fin: true))
                ], .fails(1007)),
            ConformanceCase(
                "6.4.2", "as 6.4.1, the 2nd fragment only the invalid byte",
                [
                    .send(.text(bytes: outOfRange.prefix(12), fin: false)), .sync,
                    .send(.continuation(bytes: outOfRange.subdata(in: 12..<13), fin: false)),
                    .expectFailure, .send(.continuation(bytes: outOfRange.subdata(in: 13..<outOfRange.count), fin: true))
                ], .fails(1007))
        ]
        // 6.4.3 and 6.4.4: one frame in 3 writes, cut inside its payload. We accept Autobahn's non-strict
        // outcome here: a frame is decoded once all of it has arrived, so the connection fails after the
        // 3rd write (Autobahn waits a second between writes; no barrier fits inside a frame).
        for (id, cuts) in [("6.4.3", [11, 15]), ("6.4.4", [12, 13])] {
            cases.append(
                ConformanceCase(
                    id, "one invalid frame in 3 writes cut at payload bytes \(cuts) (non-strict)",
                    [.send([.text(bytes: outOfRange)], .payloadCuts(cuts))], .fails(1007)))
        }
        for (categoryIndex, category) in UTF8Sequences.categories.enumerated() {
            for (index, sequence) in category.sequences.enumerated() {
                let bytes = Data(hex: sequence.hex)
                cases.append(
                    ConformanceCase(
                        "6.\(categoryIndex + 5).\(index + 1)", "\(category.name): \(sequence.hex)", [.send(.text(bytes: bytes))],
                        sequence.valid ? .echo([.text(bytes)]) : .fails(1007)))
            }
        }
        return cases
    }()
}
