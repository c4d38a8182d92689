import Foundation

/// Autobahn group 7, close handling (`case7_1_1.py` … `case7_13_2.py`). The testee answers a Close with
/// the code it received (Autobahn accepts 1000 or the echoed code) and no reason.
enum ConformanceCases7 {
    static let hello = "Hello World!"
    /// Why 7.1.6's echoes may be missing (Autobahn: "Close was processed before text message could be
    /// returned", informational): the echo is sent from the delegate queue, and a Close read in the same
    /// batch ends sending first (RFC 6455 §5.5.1: no data after a Close).
    static let closeRace =
        "the echoes are sent from the delegate queue; a Close read in the same batch is answered first, and no data follows a Close"

    static let close: [ConformanceCase] = {
        let long = Data(repeating: "BAsd7&jh23", count: 256 * 1024)
        var cases: [ConformanceCase] = [
            ConformanceCase("7.1.1", "a message, then a Close", [.send(.text(hello))], .echo([.text(hello)])),
            ConformanceCase("7.1.2", "two Closes", [.send(.close(1000), .close(nil))], .closes(code: 1000)),
            ConformanceCase("7.1.3", "a Ping after the Close", [.send(.close(1000), .ping())], .closes(code: 1000)),
            ConformanceCase("7.1.4", "a text message after the Close", [.send(.close(1000), .text(hello))], .closes(code: 1000)),
            ConformanceCase(
                "7.1.5", "a fragment, the Close, the last fragment",
                [.send(.text("fragment1", fin: false), .close(1000), .continuation("fragment2", fin: true))], .closes(code: 1000)),
            // Informational in Autobahn: the strict order is both messages echoed before the Close; we
            // accept Autobahn's other outcomes too (closeRace).
            ConformanceCase(
                "7.1.6", "256 KiB of text, a text, the Close, a Ping", [.send(.text(bytes: long), .text(hello), .close(1000), .ping())],
                .closes(code: 1000, replies: [.text(long), .text(hello)])
            )
            .acceptingNonStrict([], closeRace).acceptingNonStrict([.text(long)], closeRace),
            ConformanceCase(
                "7.3.1", "a Close with no payload", [.send(.close(nil))],
                .closes(replies: [], answer: Data(), reportedCode: nil, reportedReason: "")),
            ConformanceCase(
                "7.3.2", "a Close with a 1-byte payload", [.send(FuzzFrame(opcode: 0x8, payload: Data("a".utf8)))], .fails(1002)),
            ConformanceCase("7.3.3", "a Close with code 1000", [.send(.close(1000))], .closes(code: 1000)),
            ConformanceCase(
                "7.3.4", "a Close with code and reason", [.send(.close(1000, reason: hello))], .closes(code: 1000, reason: hello)),
            ConformanceCase(
                "7.3.5", "a Close with a reason of 123 bytes", [.send(.close(1000, reason: String(repeating: "*", count: 123)))],
                .closes(code: 1000, reason: String(repeating: "*", count: 123))),
            ConformanceCase(
                "7.3.6", "a Close with a reason of 124 bytes (payload 126)",
                [.send(.close(1000, reason: String(repeating: "*", count: 124)))],
                .fails(1002)),
            // Autobahn accepts 1002 or 1007; we send 1007 (RFC 6455 §8.1: invalid UTF-8 is 1007).
            ConformanceCase(
                "7.5.1", "a Close whose reason is not UTF-8", [.send(.close(1000, reason: ConformanceCases6.invalid))], .fails(1007))
        ]
        let valid: [UInt16] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999]
        cases += valid.enumerated().map { index, code in
            ConformanceCase("7.7.\(index + 1)", "a Close with valid code \(code)", [.send(.close(code))], .closes(code: code))
        }
        let invalid: [UInt16] = [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999]
        cases += invalid.enumerated().map { index, code in
            ConformanceCase("7.9.\(index + 1)", "a Close with invalid code \(code)", [.send(.close(code))], .fails(1002))
        }
        // Informational in Autobahn ("undefined by the spec"): we fail with 1002, as for 7.9.x.
        cases += [
            ConformanceCase("7.13.1", "a Close with code 5000", [.send(.close(5000))], .fails(1002)),
            ConformanceCase("7.13.2", "a Close with code 65535", [.send(.close(65535))], .fails(1002))
        ]
        return cases
    }()
}
