import Foundation
import SocketFraming

/// One case of our WebSocket conformance suite, written from the Autobahn TestSuite's case of the same id
/// (https://github.com/crossbario/autobahn-testsuite, `autobahntestsuite/case/case*.py`): what the fuzzing
/// peer sends, in steps, and what the implementation under test (the testee) must do.
///
/// The same case runs against our server (the fuzzer a raw client, masking its frames) and against our
/// client (the fuzzer a raw server, frames unmasked); the testee echoes every message with its type, as
/// Autobahn's test peers do.
struct ConformanceCase: Sendable, CustomStringConvertible {
    /// Autobahn's id, e.g. "5.9".
    let id: String
    /// Autobahn's description, shortened.
    let summary: String
    /// What the fuzzer does, in order.
    var steps: [FuzzStep]
    /// What the testee must send back and how the connection must end.
    let expected: ConformanceExpectation
    /// Other replies accepted instead of the expectation's (Autobahn's "non-strict" and "informational"
    /// outcomes), each with why.
    var nonStrict: [(replies: [FuzzReply], why: String)] = []
    /// Why a case fails today, if it is known to (run inside `withKnownIssue`); nil: it must pass.
    var knownIssue: String?

    init(
        _ id: String, _ summary: String, _ steps: [FuzzStep], _ expected: ConformanceExpectation,
        knownIssue: String? = nil
    ) {
        self.id = id
        self.summary = summary
        self.steps = steps
        self.expected = expected
        self.knownIssue = knownIssue
    }

    var description: String { "\(id) \(summary)" }

    /// The case also passing with `replies` in place of the expected ones, for the reason `why`.
    func acceptingNonStrict(_ replies: [FuzzReply], _ why: String) -> ConformanceCase {
        var copy = self
        copy.nonStrict.append((replies, why))
        return copy
    }

    /// The case with every write of frames arriving as `arrival` says (the arrival-pattern runs).
    func arriving(_ arrival: FuzzArrival) -> ConformanceCase {
        var copy = self
        copy.steps = steps.map { step in
            guard case .send(let frames, _) = step else { return step }
            return .send(frames, arrival)
        }
        return copy
    }
}

/// One thing the fuzzer does.
enum FuzzStep: Sendable {
    /// Writes the frames back to back as one byte stream, cut into writes as `arrival` says.
    case send([FuzzFrame], FuzzArrival)
    /// A Ping with a payload of the harness's own, then waits for its Pong: everything sent before has
    /// been handled (Autobahn waits a second instead). The Pong is not one of the case's replies. If the
    /// testee's Close comes instead, the steps after it are not sent (the expectation says if it may).
    case sync
    /// As ``sync``, but the testee must have failed the connection by now: its Close must come, not the
    /// Pong (Autobahn's strict outcome of the "fail fast" cases 6.4.x).
    case expectFailure
    /// Waits for the testee's next reply (a message or a Pong) before the next step: Autobahn's 9.7 and
    /// 9.8 send each message after the previous echo.
    case awaitReply

    /// Frames in one write.
    static func send(_ frames: FuzzFrame...) -> FuzzStep { .send(frames, .whole) }
    /// Frames cut into writes of `bytes` bytes (Autobahn's `chopsize`).
    static func send(chop bytes: Int, _ frames: FuzzFrame...) -> FuzzStep { .send(frames, .chunks(bytes)) }
}

/// How the bytes of one write of frames reach the testee.
enum FuzzArrival: Sendable, Equatable {
    /// One write.
    case whole
    /// Writes of this many bytes (1: a byte at a time). TCP_NODELAY is set, but the kernel may still
    /// join writes; the testee's reads see these cuts or coarser ones.
    case chunks(Int)
    /// Cuts inside each frame's header (after its first byte), inside its masking key (or extended
    /// length) and inside the first multi-byte UTF-8 sequence of a text payload.
    case splitInside
    /// Cuts at these payload offsets of each frame (Autobahn's 6.4.3 and 6.4.4 send one frame in three
    /// parts).
    case payloadCuts([Int])
}

/// What the testee must answer with, before the connection ends.
enum FuzzReply: Sendable, Equatable, CustomStringConvertible {
    /// A text message with these UTF-8 bytes.
    case text(Data)
    /// A binary message.
    case binary(Data)
    /// A Pong with this payload.
    case pong(Data)

    static func text(_ text: String) -> FuzzReply { .text(Data(text.utf8)) }
    static func pong(_ text: String) -> FuzzReply { .pong(Data(text.utf8)) }

    var description: String {
        switch self {
        case .text(let data): return "text \(FuzzFrame.summary(data))"
        case .binary(let data): return "binary \(FuzzFrame.summary(data))"
        case .pong(let data): return "pong \(FuzzFrame.summary(data))"
        }
    }
}

/// How the case ends (Autobahn's `expected` and `expectedClose`).
enum ConformanceExpectation: Sendable {
    /// The testee sends `replies`, in order and nothing else; then the fuzzer closes with 1000, the testee
    /// answers with 1000 and the connection ends clean (Autobahn: "clean close with normal code").
    case echo([FuzzReply])
    /// The fuzzer's steps hold its own Close: the testee sends `replies`, answers with a Close whose
    /// payload is `answer`, and reports `reportedCode` (nil: 1005) and `reportedReason`, clean.
    case closes(replies: [FuzzReply], answer: Data, reportedCode: UInt16?, reportedReason: String)
    /// The testee fails the connection: `replies` first, then a Close with `code` (RFC 6455 §7.1.7), then
    /// TCP ends; it reports `code`, not clean.
    case fails(code: UInt16, after: [FuzzReply])

    /// The fuzzer's Close with `code` and `reason` answered by the testee with `code` and no reason.
    static func closes(code: UInt16, reason: String = "", replies: [FuzzReply] = []) -> Self {
        .closes(replies: replies, answer: FuzzFrame.closePayload(code), reportedCode: code, reportedReason: reason)
    }

    /// Fails with `code` before any reply.
    static func fails(_ code: UInt16) -> Self { .fails(code: code, after: []) }
}
