@testable import ChatProtocol
@testable import ChatServer
import LongLink
import Testing

/// The one record of each session, and its phase's data.
@Suite struct SessionTableTests {
    static let pace = Router.Pace()

    @Test func aSessionOpensAwaitingItsLoginAndHoldsOnlyWhileItsLoginWaitsOrIsChecked() {
        var table = SessionTable()
        let peer = FakePeer(id: 7)
        table.open(peer, pace: Self.pace)
        #expect(table.phase(of: peer) == .awaitingLogin)
        #expect(!table.isHolding(peer))
        let early = table.hold(.broadcast(text: "early"), from: peer)
        #expect(!early)
        let login = ChatMessage.login(name: "ann", resumeToken: nil)
        table.set(.loginQueued(login: login, held: []), of: peer)
        let held = [table.hold(.broadcast(text: "a"), from: peer), table.hold(.broadcast(text: "b"), from: peer)]
        #expect(held == [true, true])
        #expect(table.phase(of: peer) == .loginQueued(login: login, held: [.broadcast(text: "a"), .broadcast(text: "b")]))
        let attempt = LoginAttempt(name: "ann", password: "pw", token: nil, instance: "i", positions: [:], presenceChanges: true)
        table.set(.checkingPassword(attempt, held: [.broadcast(text: "a")]), of: peer)
        let heldHeartbeat = table.hold(.heartbeat, from: peer)
        #expect(heldHeartbeat)
        #expect(table.phase(of: peer) == .checkingPassword(attempt, held: [.broadcast(text: "a"), .heartbeat]))
    }

    @Test func atMostMaxHeldMessagesAreHeld() {
        var table = SessionTable()
        let peer = FakePeer(id: 1)
        table.open(peer, pace: Self.pace)
        table.set(.loginQueued(login: .login(name: "ann", resumeToken: nil), held: []), of: peer)
        let taken = (0..<(Router.maxHeldMessages + 5)).filter { table.hold(.broadcast(text: "\($0)"), from: peer) }.count
        #expect(taken == Router.maxHeldMessages)
        #expect(table.phase(of: peer).held?.count == 1_000)
    }

    @Test func aLoggedInSessionHasItsNameUntilItIsReplacedAndItsUserGoesWithTheLogout() {
        var table = SessionTable()
        let first = FakePeer(id: 1), second = FakePeer(id: 2)
        table.open(first, pace: Self.pace)
        table.open(second, pace: Self.pace)
        let user = SessionTable.User(session: first, resumeToken: "t", version: .v2, clientInstance: "i", window: nil)
        table.logIn("ann", key: UserName.Key("ann"), user: user)
        #expect(table.phase(of: first) == .loggedIn(name: "ann"))
        #expect(table.name(of: first) == "ann")
        #expect(table.onlineNames.similar(to: UserName.Key("ANN")) == "ann")
        table.set(.replaced(name: "ann"), of: first)
        #expect(table.name(of: first) == nil)
        table.set(.closing(reason: "rate limit", name: "bob"), of: second)
        #expect(table.name(of: second) == "bob")
        let loggedOut = table.logOut("ann")
        #expect(loggedOut?.session === first)
        #expect(table.users.isEmpty)
        #expect(table.onlineNames.similar(to: UserName.Key("ann")) == nil)
        let removed = [table.remove(first)?.phase, table.remove(first)?.phase]
        #expect(removed == [.replaced(name: "ann"), nil])
        #expect(table.phase(of: first) == .awaitingLogin)
    }
}
