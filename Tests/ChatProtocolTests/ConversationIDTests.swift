@testable import ChatProtocol
import Testing

@Suite struct ConversationIDTests {
    @Test func theTextFormNamesTheRoomOrTheTwoUsersSorted() {
        #expect(ConversationID.room.description == "room")
        #expect(ConversationID(between: "bob", and: "ann") == .direct("ann", "bob"))
        #expect(ConversationID(between: "ann", and: "bob").description == "direct:ann bob")
        #expect(ConversationID(between: "ann", and: "ann").description == "direct:ann ann")
    }

    @Test(arguments: ["room", "direct:ann bob", "direct:ann ann", "direct:a:b c"])
    func theTextFormParsesBack(_ text: String) {
        #expect(ConversationID(text)?.description == text)
    }

    @Test(arguments: [
        "", "Room", "room ", "direct:", "direct:ann", "direct:bob ann", "direct:ann  bob", "direct: ann", "direct:ann bob ",
        "direct:ann bob cy", "direct:ann\tbob", "dm:ann bob"
    ])
    func anythingElseIsNotAConversation(_ text: String) {
        #expect(ConversationID(text) == nil)
    }

    @Test func theRoomSortsFirstThenDirectConversationsByNames() {
        #expect(
            [ConversationID.direct("bob", "cy"), .direct("ann", "cy"), .room, .direct("ann", "bob")].sorted()
                == [.room, .direct("ann", "bob"), .direct("ann", "cy"), .direct("bob", "cy")])
        #expect(ConversationID.direct("bob", "ann").isNormalized == false)
        #expect(ConversationID.direct("ann", "bob").hasMember("bob"))
        #expect(!ConversationID.room.hasMember("bob"))
    }
}
