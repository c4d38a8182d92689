@testable import ChatServer
import Foundation
import LongLink
import Testing

/// Resume tokens and client instances as a logged-in user's record keeps them (issue 35 §2).
@Suite struct CompactTokenTests {
    @Test func aUUIDStringIsKeptInlineAndGivenBackUnchanged() {
        let text = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"
        let token = CompactToken(text)
        #expect(token == .uuid(high: 0x0F1E_2D3C_4B5A_6978, low: 0x8796_A5B4_C3D2_E1F0))
        #expect(token.string == text)
        #expect(token.matches(text))
        let made = UUID().uuidString
        #expect(CompactToken(made).string == made)
        guard case .uuid = CompactToken(made) else {
            Issue.record("\(made) was not kept inline")
            return
        }
    }

    @Test func thirtyTwoLowercaseHexDigitsAreKeptInlineAndGivenBackUnchanged() {
        let text = "00ff00ff00ff00ff0123456789abcdef"
        #expect(CompactToken(text) == .hex(high: 0x00FF_00FF_00FF_00FF, low: 0x0123_4567_89AB_CDEF))
        #expect(CompactToken(text).string == text)
        #expect(CompactToken(String(repeating: "0", count: 32)).string == String(repeating: "0", count: 32))
    }

    /// Another case, other dashes, another length or another character: kept as the text it was, so
    /// that a token matches only its own text, exactly as the `String` did.
    @Test func anyOtherTextIsKeptAsItWasAndMatchesOnlyItself() {
        let others = [
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",  // a UUID in lowercase
            "00FF00FF00FF00FF0123456789ABCDEF",  // hexadecimal in uppercase
            "0F1E2D3C4-B5A-6978-8796-A5B4C3D2E1F0",  // a dash out of place
            "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F",  // 35 characters
            "00ff00ff00ff00ff0123456789abcdeg",  // not a digit
            "00ff00ff00ff00ff0123456789abcde",  // 31 digits
            "", "tb", "t-ann", "v1-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "ｆｆ"
        ]
        for text in others {
            #expect(CompactToken(text) == .text(text), "\(text)")
            #expect(CompactToken(text).string == text)
        }
        let token = CompactToken("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        #expect(!token.matches("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"))
        #expect(!token.matches("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F1"))
    }

    /// Regression (issue 35 §2): a logged-in user's record kept its resume token and client instance as
    /// strings of 36 and 32 characters, a heap block of ~80 bytes each; each session's record held
    /// room for the largest phase (a login attempt with its password, 168-byte records); and its
    /// message rate held its bucket's rate and burst, the same for every connection (56-byte `Pace`,
    /// 96-byte records).
    @Test func aLoggedInUsersRecordsAreSmall() {
        #expect(MemoryLayout<CompactToken>.size <= 17)
        #expect(MemoryLayout<SessionPhase>.size <= 17, "\(MemoryLayout<SessionPhase>.size)")
        #expect(MemoryLayout<Router.Pace>.size == 24, "\(MemoryLayout<Router.Pace>.size)")
        #expect(MemoryLayout<SessionTable.Record>.stride <= 64, "\(MemoryLayout<SessionTable.Record>.stride)")
        #expect(MemoryLayout<SessionTable.User>.stride <= 80, "\(MemoryLayout<SessionTable.User>.stride)")
    }

    /// A user's delivery window is boxed out of line, but stays a value: a change through one copy is
    /// not seen by another, and setting it to nil drops it.
    @Test func aUsersBoxedWindowIsStillAValue() {
        var user = SessionTable.User(
            session: FakePeer(id: 1), resumeToken: "t", version: .v2, clientInstance: "i",
            window: DeliveryWindow(positions: ["room": 0], limit: 10))
        let copy = user
        user.window?.available(conversation: "room", upTo: 5)
        #expect(user.window?.nextFetch() == DeliveryWindow.Fetch(conversation: "room", after: 0, limit: 5))
        #expect(copy.window?.nextFetch() == nil)
        var again = user
        again.window = nil
        #expect(again.window == nil)
        #expect(user.window?.nextFetch() == DeliveryWindow.Fetch(conversation: "room", after: 0, limit: 5))
        let live = SessionTable.User(session: FakePeer(id: 2), resumeToken: "u", version: .v2, clientInstance: "j", window: nil)
        #expect(live.window == nil)
    }
}
