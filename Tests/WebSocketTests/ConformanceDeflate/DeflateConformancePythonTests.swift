import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Autobahn group 13's seven parameter sets against Python `websockets` (Debian python3-websockets 10.4,
/// `Tests/Interop/ws_deflate_peer.py`), a permessage-deflate implementation nobody here wrote: its
/// server configured as Autobahn's accept functions against our client, its client sending Autobahn's
/// exact offers (13.7: all three) to our listener. The 18 sizes of the JSON corpus, fewer messages.
///
/// Python cannot compress with 8 window bits (its zlib refuses `wbits=-8`), so the 8-bit window is
/// covered by the raw peers only (``DeflateConformance13Tests``).
@Suite(.cpuBound(minutes: 2)) struct DeflateConformancePythonTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop/ws_deflate_peer.py").path
    static let limit = TestTiming.hangLimit(.seconds(20))

    static func count(_ size: DeflateMessageSize) -> Int { size.count(budget: 12 * 1024, cap: 8) }
    static var echoesPerSet: Int { DeflateMessageSize.autobahn.map(count).reduce(0, +) }

    /// `ServerPerMessageDeflateFactory` keyword arguments playing Autobahn's `accept1` … `accept7`, and
    /// the answer each gives our client's offer for that set (Python orders parameters as we do).
    static let pythonServers: [(configuration: String, response: String)] = [
        ("{}", "permessage-deflate; client_no_context_takeover"),
        (#"{"client_no_context_takeover": true}"#, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"),
        (
            #"{"client_max_window_bits": 9}"#,
            "permessage-deflate; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9"
        ),
        (#"{"client_max_window_bits": 15}"#, "permessage-deflate; client_no_context_takeover; client_max_window_bits=15"),
        (
            #"{"client_no_context_takeover": true, "client_max_window_bits": 9}"#,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9"
        ),
        (
            #"{"client_no_context_takeover": true, "client_max_window_bits": 15}"#,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits=15"
        ),
        (
            #"{"client_no_context_takeover": true, "client_max_window_bits": 9}"#,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9"
        )
    ]

    @Test func ourClientAgainstThePythonServerUnderEachParameterSet() async throws {
        let configurations = "[" + Self.pythonServers.map(\.configuration).joined(separator: ", ") + "]"
        let server = try ChildProcess("/usr/bin/python3", [Self.script, "server", "--configs", configurations])
        defer { server.stop() }
        var ports: [String] = []
        for index in Self.pythonServers.indices {
            let line = try await server.lines.next(within: Self.limit)
            #expect(line.hasPrefix("listening \(index) "))
            ports.append(String(line.split(separator: " ").last ?? ""))
        }
        for (set, (port, expected)) in zip(DeflateParameterCase.all, zip(ports, Self.pythonServers.map(\.response))) {
            var configuration = WebSocket.ClientConfiguration()
            configuration.deflate = set.client
            let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(port)/", configuration: configuration)
            #expect(connection.webSocket.extensions.map(\.description) == [expected], "13.\(set.group)")
            var messages = connection.messages.makeAsyncIterator()
            var offset = 0
            for size in DeflateMessageSize.autobahn {
                for _ in 0..<Self.count(size) {
                    let (payload, next) = DeflateCorpus.json.message(length: size.length, from: offset)
                    offset = next
                    let message = WebSocketMessage.text(String(decoding: payload, as: UTF8.self))
                    try await connection.send(message)
                    #expect(await messages.next() == message, "13.\(set.group) size \(size)")
                }
            }
            #expect(await connection.close().description == "1000 (clean)")
            let index = set.group - 1
            #expect(try await server.lines.next(within: Self.limit) == "closed \(index) 1000 \(Self.echoesPerSet) \(expected)")
        }
    }

    struct CaseResult: Decodable {
        let ok: Bool
        let echoes: Int
        let response: String?
        let error: String?
    }

    @Test func thePythonClientAgainstOurListenerUnderEachParameterSet() async throws {
        let echo = EchoListenerDelegate()
        let listeners = try DeflateParameterCase.all.map { set in try echo.start { $0.deflate = set.server } }
        defer { listeners.forEach { $0.stop() } }
        let sizes = DeflateMessageSize.autobahn.map { "[\($0.length), \($0.fragmentSize), \(Self.count($0))]" }.joined(separator: ", ")
        let cases = zip(DeflateParameterCase.all, listeners).map { set, listener in
            let offers = set.offers.map(Self.pythonOffer).joined(separator: ", ")
            return "{\"url\": \"ws://127.0.0.1:\(listener.port)/\", \"offers\": [\(offers)], \"sizes\": [\(sizes)]}"
        }
        let output = try await runOnAThread { () throws -> Data in
            let client = try ChildProcess("/usr/bin/python3", [Self.script, "client", "--cases", "[" + cases.joined(separator: ", ") + "]"])
            defer { client.stop() }
            guard client.waitForExit(within: TestTiming.hangLimit(.seconds(60))) != nil else {
                throw WaitTimedOut(description: "ws_deflate_peer.py did not finish")
            }
            return client.allOutput
        }
        let lines = output.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == DeflateParameterCase.all.count)
        for (set, line) in zip(DeflateParameterCase.all, lines) {
            let result = try JSONDecoder().decode(CaseResult.self, from: Data(line))
            #expect(result.error == nil, "13.\(set.group)")
            #expect(result.ok && result.echoes == Self.echoesPerSet, "13.\(set.group)")
            #expect(result.response == set.ourResponse, "13.\(set.group)")
        }
        var accepted: [String] = []
        for _ in 0..<(2 * DeflateParameterCase.all.count) {
            let event = try await echo.events.next(within: Self.limit)
            if event.hasPrefix("accepted ") {
                accepted.append(event)
            } else {
                #expect(event == "closed 1000 (clean) after \(Self.echoesPerSet) echoes")
            }
        }
        #expect(accepted.sorted() == DeflateParameterCase.all.map { "accepted / [\"\($0.ourResponse)\"]" }.sorted())
    }

    /// One Autobahn offer as `ClientPerMessageDeflateFactory` keyword arguments (JSON).
    static func pythonOffer(_ offer: String) -> String {
        var arguments = ["\"client_no_context_takeover\": true", "\"client_max_window_bits\": true"]
        for parameter in offer.split(separator: "; ").dropFirst() {
            if parameter == "server_no_context_takeover" { arguments.append("\"server_no_context_takeover\": true") }
            if parameter.hasPrefix("server_max_window_bits=") {
                arguments.append("\"server_max_window_bits\": \(parameter.dropFirst("server_max_window_bits=".count))")
            }
        }
        return "{" + arguments.joined(separator: ", ") + "}"
    }
}
