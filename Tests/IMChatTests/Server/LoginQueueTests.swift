import AsyncSocket
import Foundation
@testable import IMChat
import LongLink
import Testing
import TestSupport

/// Logins wait their turn on the routing queue (Router+LoginQueue); what a session sends meanwhile,
/// heartbeats included, is answered after its login, in order.
@Suite struct LoginQueueTests {
    /// Regression: while a login waited (its turn, or its password check), the acknowledgement of a
    /// heartbeat sent behind it went out first, so a client using the heartbeat as a barrier (as
    /// `im-client` does when its input ends) left before its login and its message were answered.
    @Test(arguments: [nil, "ann's password"])
    func aHeartbeatBehindAWaitingLoginIsAnsweredAfterTheLoginAndTheMessagesBeforeIt(password: String?) async throws {
        let chat = try ChatFixture()
        let raw = try await RawChatConnection(port: chat.server.port)
        let codec = ChatCodec()
        let login = ChatMessage.v2(.login(name: "ann", password: password, resumeToken: nil,
                                          clientInstance: String(repeating: "ab", count: 16), positions: [:]))
        try await raw.send(try codec.encode(login) + codec.encode(.v2(.directMessage(id: 1, to: "nobody", text: "hi")))
                           + codec.encode(.v2(.heartbeat)))
        var answers: [String] = []
        while let message = try await raw.nextSkippingPresence() {
            switch message {
            case .v2(.loginAccepted(let name, _, _, _, let stored)): answers.append("accepted \(name) stored \(stored)")
            case .v2(.error(let code, _, let id, _)): answers.append("\(code) \(id.map(String.init) ?? "-")")
            case .v2(.heartbeatAck): answers.append("heartbeat ack")
            default: answers.append("\(message)")
            }
            if answers.last == "heartbeat ack" { break }
        }
        #expect(answers == ["accepted ann stored \(password != nil)", "unknownRecipient 1", "heartbeat ack"])
    }

    /// Many logins at once are each answered, and each session's messages sent right behind its login
    /// are handled after it, in order.
    @Test func aCrowdOfLoginsIsAnsweredAndEachSessionsMessagesFollowItsLogin() async throws {
        let chat = try ChatFixture()
        let codec = ChatCodec()
        let count = 3 * Router.loginsPerPass + 5
        var connections: [RawChatConnection] = []
        for index in 0..<count {
            let raw = try await RawChatConnection(port: chat.server.port)
            connections.append(raw)
            let name = "user\(index)"
            try await raw.send(try codec.encode(.login(name: name, resumeToken: nil)) + codec.encode(.directMessage(to: name, text: "one"))
                               + codec.encode(.directMessage(to: name, text: "two")))
        }
        for (index, raw) in connections.enumerated() {
            guard case .loginAccepted(let name, _, _, _)? = try await raw.nextSkippingPresence() else {
                Issue.record("user\(index): no login answer")
                return
            }
            #expect(name == "user\(index)")
            #expect(try await raw.nextSkippingPresence() == .delivery(from: name, text: "one", isDirect: true))
            #expect(try await raw.nextSkippingPresence() == .delivery(from: name, text: "two", isDirect: true))
        }
        #expect(chat.server.onlineUsers.count == count)
    }
}
