import Foundation
import SocketFraming
import Testing
import TestSupport

/// Our WebSocket server and client against the cases of the Autobahn TestSuite (groups 1–7, 9, 10),
/// played by a raw fuzzing peer of our own: docs/WEBSOCKET-CONFORMANCE.md has the table of results.
///
/// Each test runs one group's cases one after the other on a thread of its own (the fuzzer blocks), each
/// case on a new connection; a case's problems are recorded with its id.
@Suite(.offThePool) struct WebSocketConformanceTests {
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

    /// The harness's permessage-deflate side, for groups 12 and 13 once our connections negotiate it: a
    /// fuzzing server compresses (context takeover, a message in 100-byte fragments) and a fuzzing
    /// client inflates, after the offer and the answer crossed.
    @Test func theDeflateHarnessRoundTrips() async throws {
        let parameters = "permessage-deflate; client_no_context_takeover"
        let negotiation = ConformanceNegotiation.permessageDeflate(
            offer: parameters, answer: parameters, agreement: PerMessageDeflate.Agreement(clientNoContextTakeover: true))
        let (listening, port) = try RawSocket.listen()
        let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(10))
        let text = Data(repeating: "compress me, ", count: 3_000)
        async let sent = runOnAThread { () throws -> Bool in
            let server = try FuzzPeer.server(accepting: listening, negotiation: negotiation, deadline: deadline)
            return try server.send(message: .text(text), fragmentSize: 100)
                && server.send(message: .binary(Data([1, 2, 3])), fragmentSize: nil)
                && server.send(message: .text(text), fragmentSize: nil)
        }
        let received = try await runOnAThread { () throws -> [FuzzReply] in
            let client = try FuzzPeer.client(port: port, negotiation: negotiation, deadline: deadline)
            var session = FuzzSession(peer: client)
            try session.readReplies(upTo: 3)
            #expect(session.compressedReplies == 3 && session.problems.isEmpty, "\(session.problems)")
            return session.replies
        }
        #expect(try await sent)
        #expect(received == [.text(text), .binary(Data([1, 2, 3])), .text(text)])
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
