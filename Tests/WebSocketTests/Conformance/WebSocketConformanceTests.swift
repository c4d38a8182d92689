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
        await check(group.cases, against: .server)
    }

    @Test(arguments: ConformanceGroup.allCases)
    func ourClient(_ group: ConformanceGroup) async {
        await check(group.cases, against: .client)
    }

    /// A selection of cases with every write cut into single bytes, and cut inside each frame's header,
    /// masking key (or extended length) and first UTF-8 sequence.
    @Test(arguments: ConformanceTestee.allCases, [FuzzArrival.chunks(1), .splitInside])
    func arrivalPatterns(_ testee: ConformanceTestee, _ arrival: FuzzArrival) async {
        await check(ConformanceGroup.arrivalSelection.map { $0.arriving(arrival) }, against: testee)
    }

    /// The table's ids are Autobahn's, each once, and every case of Autobahn's groups is there.
    @Test func theTableHoldsEveryCaseOfEachGroupOnce() {
        let ids = ConformanceGroup.allCases.flatMap(\.cases).map(\.id)
        #expect(Set(ids).count == ids.count)
        for group in ConformanceGroup.allCases {
            #expect(group.cases.count == group.autobahnCaseCount, "group \(group)")
            #expect(group.cases.allSatisfy { $0.id.hasPrefix("\(group.rawValue).") }, "group \(group)")
        }
        #expect(ConformanceGroup.arrivalSelection.count == 28)
    }

    private func check(_ cases: [ConformanceCase], against testee: ConformanceTestee) async {
        let problems = await runOnAThread { ConformanceRunner.run(cases, against: testee) }
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
