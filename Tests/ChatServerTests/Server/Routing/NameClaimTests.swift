@testable import ChatProtocol
@testable import ChatServer
import LongLink
import Testing

/// Who gets a name at the end of a login, decided with no socket.
@Suite struct NameClaimTests {
    static func table(with names: [String: FakePeer]) -> SessionTable {
        var table = SessionTable()
        for (name, peer) in names {
            table.open(peer, pace: Router.Pace())
            table.logIn(
                name, key: UserName.Key(name),
                user: .init(session: peer, resumeToken: "t-\(name)", version: .v2, clientInstance: "i", window: nil))
        }
        return table
    }

    static func hash(_ token: String) -> String { "h(\(token))" }

    @Test func aFreeNameIsTakenAndASimilarOneOnlineIsRefused() {
        let table = Self.table(with: ["ann": FakePeer(id: 1)])
        #expect(NameClaim.decide("bob", token: nil, proven: false, table: table, remote: nil, hashToken: Self.hash) == .take)
        #expect(
            NameClaim.decide("ANN", token: "t-ann", proven: true, table: table, remote: nil, hashToken: Self.hash)
                == .refuse(detail: "ANN is too similar to ann, who is logged in", reason: "too similar to ann, who is logged in"))
    }

    @Test func theResumeTokenOrAPasswordReplacesTheSessionHereAndNothingElseDoes() {
        let table = Self.table(with: ["ann": FakePeer(id: 1)])
        #expect(NameClaim.decide("ann", token: "t-ann", proven: false, table: table, remote: nil, hashToken: Self.hash) == .replaceHere)
        #expect(NameClaim.decide("ann", token: nil, proven: true, table: table, remote: nil, hashToken: Self.hash) == .replaceHere)
        #expect(
            NameClaim.decide("ann", token: "other", proven: false, table: table, remote: nil, hashToken: Self.hash)
                == .refuse(detail: "ann is already logged in", reason: "already logged in from 127.0.0.1:40001"))
    }

    @Test func onAnotherNodeTheTokensHashOrAPasswordReplacesItThere() {
        let table = SessionTable()
        let remote = (node: "n2", tokenHash: "h(t-ann)")
        #expect(
            NameClaim.decide("ann", token: "t-ann", proven: false, table: table, remote: remote, hashToken: Self.hash)
                == .replaceOnNode("n2"))
        #expect(
            NameClaim.decide("ann", token: nil, proven: true, table: table, remote: remote, hashToken: Self.hash) == .replaceOnNode("n2"))
        #expect(
            NameClaim.decide("ann", token: "t-other", proven: false, table: table, remote: remote, hashToken: Self.hash)
                == .refuse(detail: "ann is already logged in", reason: "already logged in on node n2"))
    }
}
