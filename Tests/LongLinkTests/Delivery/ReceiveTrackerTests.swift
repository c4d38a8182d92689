import LongLink
import Testing

@Suite struct ReceiveTrackerTests {
    @Test func inOrderDeliveriesOweOneAcknowledgementPerConversation() {
        var tracker = ReceiveTracker()
        #expect(tracker.receive(conversation: "room", sequence: 1) == .deliver)
        #expect(tracker.receive(conversation: "room", sequence: 2) == .deliver)
        #expect(tracker.receive(conversation: "direct:ann bob", sequence: 1) == .deliver)
        #expect(tracker.receive(conversation: "room", sequence: 3) == .deliver)
        #expect(tracker.positions == ["room": 3, "direct:ann bob": 1])
        let acknowledgements = tracker.takeAcknowledgements()
        #expect(acknowledgements.map(\.conversation) == ["direct:ann bob", "room"])
        #expect(acknowledgements.map(\.sequence) == [1, 3])
        #expect(!tracker.owesAcknowledgements)
        #expect(tracker.takeAcknowledgements().isEmpty)
    }

    @Test func duplicatesAreDroppedAndAcknowledgedAgain() {
        var tracker = ReceiveTracker(positions: ["room": 5])
        #expect(tracker.receive(conversation: "room", sequence: 5) == .duplicate)
        #expect(tracker.receive(conversation: "room", sequence: 2) == .duplicate)
        #expect(tracker.duplicates == 2)
        #expect(tracker.positions == ["room": 5])
        #expect(tracker.takeAcknowledgements().map(\.sequence) == [5])
        #expect(tracker.takeChangedPositions() == [:])
    }

    @Test func aGapIsNotPassedOnAndIsCounted() {
        var tracker = ReceiveTracker(positions: ["room": 5])
        #expect(tracker.receive(conversation: "room", sequence: 6) == .deliver)
        #expect(tracker.receive(conversation: "room", sequence: 8) == .gap(expected: 7))
        #expect(tracker.gaps == 1)
        #expect(tracker.positions == ["room": 6])
        #expect(tracker.receive(conversation: "room", sequence: 7) == .deliver)
        #expect(tracker.takeAcknowledgements().map(\.sequence) == [7])
    }

    /// Retention: after a login that reported position 5, the server's first delivery is 9 because it
    /// no longer has 6 to 8. Taken (a reconnect would get 9 again, for ever); later gaps are not.
    @Test func aConversationsFirstDeliveryOnAConnectionMaySkipWhatTheServerNoLongerHas() {
        var tracker = ReceiveTracker(positions: ["room": 5, "direct:ann bob": 2])
        #expect(tracker.receive(conversation: "room", sequence: 9) == .deliver)
        #expect(tracker.skipped == 3)
        #expect(tracker.receive(conversation: "room", sequence: 11) == .gap(expected: 10))
        #expect(tracker.receive(conversation: "direct:ann bob", sequence: 3) == .deliver)
        tracker.connectionEnded()
        #expect(tracker.receive(conversation: "room", sequence: 12) == .deliver)
        #expect(tracker.receive(conversation: "direct:ann bob", sequence: 5) == .deliver)
        #expect(tracker.skipped == 6)
        #expect(tracker.gaps == 1)
        #expect(tracker.positions == ["room": 12, "direct:ann bob": 5])
    }

    @Test func aConversationAtPositionZeroStartsWhereItsFirstDeliveryIs() {
        var tracker = ReceiveTracker()
        // A user who joined the room when it held 41 messages receives 42 first.
        #expect(tracker.receive(conversation: "room", sequence: 42) == .deliver)
        #expect(tracker.receive(conversation: "room", sequence: 44) == .gap(expected: 43))  // not the first any more
        #expect(tracker.receive(conversation: "room", sequence: 0) == .duplicate)
        #expect(tracker.positions == ["room": 42])
    }

    @Test func sequenceZeroIsNeverDeliveredNorAcknowledged() {
        var tracker = ReceiveTracker()
        #expect(tracker.receive(conversation: "room", sequence: 0) == .duplicate)
        #expect(tracker.takeAcknowledgements().isEmpty)
        #expect(tracker.positions == [:])
    }

    @Test func changedPositionsAreTakenOnce() {
        var tracker = ReceiveTracker(positions: ["room": 1, "empty": 0])
        #expect(tracker.positions == ["room": 1])
        _ = tracker.receive(conversation: "room", sequence: 2)
        _ = tracker.receive(conversation: "a", sequence: 1)
        #expect(tracker.takeChangedPositions() == ["room": 2, "a": 1])
        #expect(tracker.takeChangedPositions() == [:])
    }
}
