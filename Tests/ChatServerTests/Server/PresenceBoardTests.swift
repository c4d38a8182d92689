@testable import ChatServer
import Testing

/// The roster and the coalescing of one presence tick, without sockets.
@Suite struct PresenceBoardTests {
    @Test func theRosterStaysSortedAndPages() {
        var board = PresenceBoard()
        for name in ["dan", "ann", "carl", "bob", "émile", "Zed"] { board.loggedIn(name) }
        #expect(board.roster == ["Zed", "ann", "bob", "carl", "dan", "émile"])  // code-point order
        board.loggedOut("carl")
        #expect(board.roster == ["Zed", "ann", "bob", "dan", "émile"])
        #expect(board.contains("bob") && !board.contains("carl"))
        #expect(board.page(after: nil, limit: 2) == (names: ["Zed", "ann"], more: true))
        #expect(board.page(after: "ann", limit: 2) == (names: ["bob", "dan"], more: true))
        // After a name that is not online: from the next one online.
        #expect(board.page(after: "carl", limit: 2) == (names: ["dan", "émile"], more: false))
        #expect(board.page(after: "émile", limit: 2) == (names: [], more: false))
        #expect(board.page(after: "a", limit: 100) == (names: ["ann", "bob", "dan", "émile"], more: false))
        #expect(board.first(3, excluding: "ann") == ["Zed", "bob", "dan"])
        #expect(board.count == 5)
    }

    @Test func aLoginAndALogoutWithinATickCancelOut() {
        var board = PresenceBoard()
        board.loggedIn("ann")
        board.loggedIn("bob")
        _ = board.takeTick(listed: 100, legacy: 20)
        board.loggedIn("carl")
        board.loggedOut("carl")  // came and went: not announced
        board.loggedOut("bob")
        board.loggedIn("bob")  // went and came back: not announced
        board.loggedOut("ann")
        board.loggedIn("dan")
        #expect(board.hasChanges)
        let tick = board.takeTick(listed: 100, legacy: 20)
        #expect(tick.online == ["dan"] && tick.offline == ["ann"])
        #expect(tick.listedOnline == ["dan"] && tick.listedOffline == ["ann"] && tick.unlisted == 0)
        #expect(tick.legacy.map(\.name) == ["ann", "dan"] && tick.legacy.map(\.online) == [false, true])
        #expect(tick.legacy.map(\.event) == [7, 8])
        // What cancelled out, for the sessions that logged in between (their login reply showed it).
        #expect(
            tick.reverted.map { "\($0.name) \($0.online) \($0.firstEvent)...\($0.lastEvent)" } == ["bob true 5...6", "carl false 3...4"])
        #expect(!board.hasChanges)
        #expect(
            board.takeTick(listed: 100, legacy: 20)
                == PresenceBoard.Tick(
                    online: [], offline: [], listedOnline: [],
                    listedOffline: [], unlisted: 0, legacy: []))
    }

    @Test func aCrowdedTickListsTheFirstNamesAndCountsTheRest() {
        var board = PresenceBoard()
        for index in 1...150 { board.loggedIn(String(format: "u%03d", index)) }
        _ = board.takeTick(listed: 100, legacy: 20)
        for index in 1...30 { board.loggedOut(String(format: "u%03d", index * 5)) }  // u005 … u150
        for index in 151...250 { board.loggedIn(String(format: "u%03d", index)) }
        let tick = board.takeTick(listed: 100, legacy: 20)
        #expect(tick.online.count == 100 && tick.offline.count == 30 && tick.unlisted == 30)
        // The first 100 changed names in order: the 30 offline ones (all before u151), then 70 online.
        #expect(tick.listedOffline == (1...30).map { String(format: "u%03d", $0 * 5) })
        #expect(tick.listedOnline == (151...220).map { String(format: "u%03d", $0) })
        #expect(tick.legacy.map(\.name) == (1...20).map { String(format: "u%03d", $0 * 5) })
        #expect(board.count == 220)
    }
}
