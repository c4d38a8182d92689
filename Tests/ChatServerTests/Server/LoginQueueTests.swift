import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

/// Logins wait their turn on the routing queue (Router+LoginQueue); what a session sends meanwhile,
/// heartbeats included, is answered after its login, in order.
@Suite struct LoginQueueTests {
    /// A server answer in a few words: "accepted ann stored true", "unknownRecipient 1", "heartbeat ack".
    static func answer(_ message: ChatMessage) -> String {
        switch message {
        case .v2(.loginAccepted(let name, _, _, _, let stored)): return "accepted \(name) stored \(stored)"
        case .v2(.error(let code, _, let id, _)): return "\(code) \(id.map(String.init) ?? "-")"
        case .v2(.heartbeatAck): return "heartbeat ack"
        default: return "\(message)"
        }
    }

    /// Regression: while a login waited its turn, the acknowledgement of a heartbeat sent behind it
    /// went out first, so a client using the heartbeat as a barrier (as `im-client` does when its
    /// input ends) left before its login and its message were answered. While a password is checked,
    /// though, heartbeats are answered at once (next test).
    @Test(arguments: [nil, "ann's password"])
    func aHeartbeatBehindAWaitingLoginIsAnsweredAfterTheLoginAndTheMessagesBeforeIt(password: String?) async throws {
        let chat = try ChatFixture()
        // The password check waits behind a gate until the heartbeat's answer is in: otherwise it could
        // end before the heartbeat is read (it did under ThreadSanitizer) and the order would differ.
        let gate = DispatchSemaphore(value: 0)
        if password != nil { for queue in chat.server.router.hashing { queue.async { gate.wait() } } }
        var released = password == nil
        defer { if !released { gate.signal(); gate.signal() } }  // never leave the queues blocked
        let raw = try await RawChatConnection(port: chat.server.port)
        let codec = ChatCodec()
        let login = ChatMessage.v2(
            .login(
                name: "ann", password: password, resumeToken: nil,
                clientInstance: String(repeating: "ab", count: 16), positions: [:]))
        try await raw.send(
            try codec.encode(login) + codec.encode(.v2(.directMessage(id: 1, to: "nobody", text: "hi")))
                + codec.encode(.v2(.heartbeat)))
        var answers: [String] = []
        while let message = try await raw.nextSkippingPresence() {
            answers.append(Self.answer(message))
            if answers.last == "heartbeat ack" { break }
        }
        if password == nil {
            #expect(answers == ["accepted ann stored false", "unknownRecipient 1", "heartbeat ack"])
        } else {
            // The heartbeat is answered when the password check starts, before its outcome.
            #expect(answers == ["heartbeat ack"])
            gate.signal()
            gate.signal()
            released = true
            var rest: [String] = []
            while rest.count < 2, let message = try await raw.nextSkippingPresence() { rest.append(Self.answer(message)) }
            #expect(rest == ["accepted ann stored true", "unknownRecipient 1"])
        }
    }

    /// Regression (chat-chaos.sh under load): a client whose heartbeats went unanswered while its
    /// password was checked (held with its messages) dropped the connection and logged in again, with
    /// another check queued behind the first: under load, a livelock. Heartbeats are answered during
    /// the check, and the check of a client gone meanwhile is skipped.
    @Test func heartbeatsAreAnsweredWhileAPasswordIsChecked() async throws {
        let chat = try ChatFixture()
        // The password checks wait behind a gate: the check is "slow" for as long as the test wants.
        let gate = DispatchSemaphore(value: 0)
        for queue in chat.server.router.hashing { queue.async { gate.wait() } }
        let raw = try await RawChatConnection(port: chat.server.port)
        let codec = ChatCodec()
        let login = ChatMessage.v2(
            .login(
                name: "ann", password: "ann's password", resumeToken: nil,
                clientInstance: String(repeating: "cd", count: 16), positions: [:]))
        try await raw.send(try codec.encode(login) + codec.encode(.v2(.heartbeat)))
        #expect(try await raw.nextSkippingPresence() == .v2(.heartbeatAck))
        try await raw.send(try codec.encode(.v2(.heartbeat)))
        #expect(try await raw.nextSkippingPresence() == .v2(.heartbeatAck))
        gate.signal()
        gate.signal()
        guard case .v2(.loginAccepted("ann", _, _, _, true))? = try await raw.nextSkippingPresence() else {
            Issue.record("no login answer after the check")
            return
        }
    }
}
