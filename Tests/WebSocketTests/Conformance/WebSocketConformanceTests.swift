import Foundation
import SocketFraming
import Testing
import TestSupport

/// Our WebSocket server and client against the cases of the Autobahn TestSuite (groups 1–7, 9, 10),
/// played by a raw fuzzing peer of our own: docs/WEBSOCKET-CONFORMANCE.md has the table of results.
///
/// Each test runs one group's cases one after the other on a thread of its own (the fuzzer blocks), each
/// case on a new connection; a case's problems are recorded with its id.
@Suite(.cpuBound) struct WebSocketConformanceTests {
    @Test(arguments: ConformanceGroup.allCases)
    func ourServer(_ group: ConformanceGroup) async {
        await check({ group.cases }, against: .server)
    }

    @Test(arguments: ConformanceGroup.allCases)
    func ourClient(_ group: ConformanceGroup) async {
        await check({ group.cases }, against: .client)
    }

    /// A selection of cases with every write cut into single bytes (the opening handshake's too), and
    /// cut inside each frame's header, masking key (or extended length) and first UTF-8 sequence.
    @Test(arguments: ConformanceTestee.allCases, [FuzzArrival.chunks(1), .splitInside])
    func arrivalPatterns(_ testee: ConformanceTestee, _ arrival: FuzzArrival) async {
        await check(
            { ConformanceGroup.arrivalSelection.map { $0.arriving(arrival) } }, against: testee, bytewiseHandshake: arrival == .chunks(1))
    }

    /// Our client with the fuzzing server's 101 answer and its first frames in one write: the frames
    /// are the bytes after the answer's head.
    @Test func ourClientWithFramesGluedToTheAnswer() async {
        await check({ ConformanceGroup.arrivalSelection }, against: .client, gluesAnswer: true)
    }

    /// The raw peers' permessage-deflate side (``RawDeflateEndpoint``, which the deflate conformance
    /// suite plays groups 12 and 13 with), end to end between two of them: a raw server compresses
    /// (context takeover, a message in 100-byte fragments) and a raw client inflates, after the offer and
    /// the answer crossed.
    @Test func theDeflateHarnessRoundTrips() async throws {
        let parameters = "permessage-deflate; client_no_context_takeover"
        let agreement = PerMessageDeflate.Agreement(clientNoContextTakeover: true)
        let (listening, port) = try BlockingLoopbackSocket.listen()
        let text = Data(repeating: "compress me, ", count: 3_000)
        async let offered = runOnAThread { () throws -> String in
            let (peer, offer) = try RawDeflateEndpoint.accept(listening, response: parameters)
            let server = RawDeflateEndpoint(peer: peer, agreement: agreement)
            try server.send(.text, text, fragmentSize: 100)
            try server.send(.binary, Data([1, 2, 3]), fragmentSize: 0)
            try server.send(.text, text, fragmentSize: 0)
            return offer
        }
        let (answer, received) = try await runOnAThread { () throws -> (String, [String]) in
            let (peer, answer) = try RawDeflateEndpoint.connect(port: port, offer: parameters)
            let client = RawDeflateEndpoint(peer: peer, agreement: agreement)
            let messages = try (0..<3).map { _ in try client.receive() }
            return (answer, messages.map { "\($0.opcode) \($0.payload == text ? "text" : "\(Array($0.payload))")" })
        }
        #expect(try await offered == parameters)
        #expect(answer == parameters)
        #expect(received == ["text text", "binary [1, 2, 3]", "text text"])
    }

    /// The table's ids are Autobahn's, each once, and every case of Autobahn's groups is there.
    @Test func theTableHoldsEveryCaseOfEachGroupOnce() async {
        // Built on a thread of its own: group 9's megabytes take a moment in a debug build.
        let tables = await runOnAThread { ConformanceGroup.allCases.map { ($0, $0.cases) } }
        let ids = tables.flatMap(\.1).map(\.id)
        #expect(Set(ids).count == ids.count)
        for (group, cases) in tables {
            #expect(cases.count == group.autobahnCaseCount, "group \(group)")
            #expect(cases.allSatisfy { $0.id.hasPrefix("\(group.rawValue).") }, "group \(group)")
        }
        #expect(ConformanceGroup.arrivalSelection.count == 28)
    }

    /// Builds the cases and runs them on a thread of their own (the fuzzer blocks, and the tables take a
    /// moment to build), then records each case's problems with its id.
    private func check(
        _ makeCases: @escaping @Sendable () -> [ConformanceCase], against testee: ConformanceTestee, gluesAnswer: Bool = false,
        bytewiseHandshake: Bool = false
    ) async {
        let (cases, problems) = await runOnAThread {
            let cases = makeCases()
            return (cases, ConformanceRunner.run(cases, against: testee, gluesAnswer: gluesAnswer, bytewiseHandshake: bytewiseHandshake))
        }
        for (index, conformanceCase) in cases.enumerated() {
            let found = problems[index] ?? []
            if let knownIssue = conformanceCase.knownIssue {
                withKnownIssue("\(conformanceCase.id): \(knownIssue)") {
                    for problem in found { Issue.record("\(conformanceCase) (our \(testee)): \(problem)") }
                }
            } else {
                for problem in found { Issue.record("\(conformanceCase) (our \(testee)): \(problem)") }
            }
        }
    }
}
