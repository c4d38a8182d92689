import LongLink
import Testing

@Suite struct DeliveryWindowTests {
    typealias Fetch = DeliveryWindow.Fetch

    @Test func backlogStreamsInPagesNoLargerThanTheWindowAllows() {
        var window = DeliveryWindow(positions: ["room": 10], limit: 5)
        window.available(conversation: "room", upTo: 22)
        #expect(window.nextFetch(maxMessages: 100) == Fetch(conversation: "room", after: 10, limit: 5))
        window.sent(Fetch(conversation: "room", after: 10, limit: 5))
        #expect(window.unacknowledged == 5)
        #expect(window.nextFetch() == nil)  // full
        #expect(window.acknowledge(conversation: "room", upTo: 13) == true)
        #expect(window.unacknowledged == 2)
        #expect(window.nextFetch() == Fetch(conversation: "room", after: 15, limit: 3))
        window.sent(Fetch(conversation: "room", after: 15, limit: 3))
        #expect(window.acknowledge(conversation: "room", upTo: 18) == true)
        #expect(window.nextFetch(maxMessages: 2) == Fetch(conversation: "room", after: 18, limit: 2))
        window.sent(Fetch(conversation: "room", after: 18, limit: 2))
        #expect(window.nextFetch() == Fetch(conversation: "room", after: 20, limit: 2))
        window.sent(Fetch(conversation: "room", after: 20, limit: 2))
        #expect(window.nextFetch() == nil)  // all sent
        #expect(window.sentPosition(of: "room") == 22)
        #expect(window.positions == ["room": 18])
    }

    @Test func defaultCapIsTwoHundredFiftySix() {
        #expect(DeliveryWindow().limit == 256)
    }

    @Test func acknowledgementsAreCumulativeClampedAndNeverMoveBack() {
        var window = DeliveryWindow(positions: ["room": 2])
        window.available(conversation: "room", upTo: 9)
        window.sent(Fetch(conversation: "room", after: 2, limit: 4))  // 3…6
        #expect(window.acknowledge(conversation: "room", upTo: 5) == true)
        #expect(window.acknowledge(conversation: "room", upTo: 4) == false)  // backwards: nothing
        #expect(window.acknowledge(conversation: "room", upTo: 5) == false)  // again: nothing
        #expect(window.acknowledge(conversation: "room", upTo: 40) == true)  // beyond what was sent: clamped
        #expect(window.positions == ["room": 6])
        #expect(window.unacknowledged == 0)
        #expect(window.acknowledge(conversation: "unknown", upTo: 3) == false)
    }

    @Test func conversationsTakeTurns() {
        var window = DeliveryWindow(limit: 100)
        window.available(conversation: "room", upTo: 30)
        window.available(conversation: "direct:ann bob", upTo: 3)
        window.available(conversation: "direct:ann cy", upTo: 1)
        var order: [String] = []
        while let fetch = window.nextFetch(maxMessages: 10) {
            order.append("\(fetch.conversation) \(fetch.after + 1)…\(fetch.through)")
            window.sent(fetch)
        }
        #expect(order == ["direct:ann bob 1…3", "direct:ann cy 1…1", "room 1…10", "room 11…20", "room 21…30"])
    }

    @Test func liveMessagesFollowTheBacklogInOrder() {
        var window = DeliveryWindow(positions: ["room": 0], limit: 3)
        window.available(conversation: "room", upTo: 4)
        window.sent(Fetch(conversation: "room", after: 0, limit: 3))
        window.available(conversation: "room", upTo: 5)  // a live message while the window is full
        #expect(window.nextFetch() == nil)
        window.acknowledge(conversation: "room", upTo: 3)
        #expect(window.nextFetch() == Fetch(conversation: "room", after: 3, limit: 2))
        window.available(conversation: "room", upTo: 2)  // a head never moves back
        #expect(window.nextFetch() == Fetch(conversation: "room", after: 3, limit: 2))
    }

    @Test func aPageTheStoreNoLongerHasCountsAsSent() {
        var window = DeliveryWindow(positions: ["room": 0], limit: 10)
        window.available(conversation: "room", upTo: 8)
        // Retention removed 1…5: the store returns 6…8 for this fetch; the whole page counts as sent.
        let fetch = Fetch(conversation: "room", after: 0, limit: 8)
        #expect(window.nextFetch() == fetch)
        window.sent(fetch)
        #expect(window.nextFetch() == nil)
        #expect(window.acknowledge(conversation: "room", upTo: 8) == true)
        #expect(window.unacknowledged == 0)
    }
}
