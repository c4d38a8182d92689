/// The Autobahn TestSuite's case groups we run, by number.
enum ConformanceGroup: Int, CaseIterable, Sendable, CustomStringConvertible {
    case framing = 1
    case pingsAndPongs = 2
    case reservedBits = 3
    case opcodes = 4
    case fragmentation = 5
    case utf8 = 6
    case closeHandling = 7
    case limitsAndPerformance = 9
    case autoFragmentation = 10

    var cases: [ConformanceCase] {
        switch self {
        case .framing: ConformanceCases1To4.framing
        case .pingsAndPongs: ConformanceCases1To4.pings
        case .reservedBits: ConformanceCases1To4.reservedBits
        case .opcodes: ConformanceCases1To4.opcodes
        case .fragmentation: ConformanceCases5.fragmentation
        case .utf8: ConformanceCases6.utf8
        case .closeHandling: ConformanceCases7.close
        case .limitsAndPerformance: ConformanceCases9And10.limits
        case .autoFragmentation: ConformanceCases9And10.autoFragmentation
        }
    }

    var description: String { "\(rawValue)" }

    /// How many cases Autobahn has in the group (groups 6 and 9 built from its tables).
    var autobahnCaseCount: Int {
        switch self {
        case .framing: 16
        case .pingsAndPongs: 11
        case .reservedBits: 7
        case .opcodes: 10
        case .fragmentation: 20
        case .utf8: 145
        case .closeHandling: 37
        case .limitsAndPerformance: 54
        case .autoFragmentation: 1
        }
    }

    /// The cases run again with other arrival patterns: cases of every group that exercise the three
    /// length encodings, masks, control frames between fragments, UTF-8 within and across fragments,
    /// failures after a message and the close handshake.
    static let arrivalSelection: [ConformanceCase] = {
        let ids: Set<String> = [
            "1.1.2", "1.1.3", "1.1.7", "1.2.4", "1.2.7", "2.2", "2.4", "2.5", "2.10", "3.2", "4.1.3", "5.6", "5.15", "5.19", "6.2.1",
            "6.2.2",
            "6.2.4",
            "6.3.1", "6.3.2", "6.7.4", "6.12.8", "6.20.1", "7.1.1", "7.1.5", "7.3.4", "7.5.1", "7.9.4", "10.1.1"
        ]
        return allCases.flatMap(\.cases).filter { ids.contains($0.id) }
    }()
}
