import Foundation
import LongLink
import Testing

@Suite struct OutboxTests {
    /// An outbox of `count` messages "m1", "m2", … numbered from 1.
    private func filled(_ count: Int, limit: Int = 10, window: Int = 3) throws -> Outbox<String> {
        var outbox = Outbox<String>(limit: limit, window: window)
        for index in 1...count {
            try outbox.append(id: outbox.nextID, frame: Data("m\(index)".utf8), message: "m\(index)")
        }
        return outbox
    }

    /// The ids `nextToSend()` hands out until it returns nil.
    private func drain(_ outbox: inout Outbox<String>) -> [UInt64] {
        var ids: [UInt64] = []
        while let entry = outbox.nextToSend() { ids.append(entry.id) }
        return ids
    }

    @Test func idsStartAtOneAndIncrease() throws {
        let outbox = try filled(3)
        #expect(outbox.ids == [1, 2, 3])
        #expect(outbox.nextID == 4)
        #expect(outbox.count == 3)
        #expect(outbox.inFlight == 0)
    }

    @Test func defaultsAreTenThousandHeldAndTwoHundredFiftySixInFlight() {
        let outbox = Outbox<String>()
        #expect(outbox.limit == 10_000)
        #expect(outbox.window == 256)
        #expect(outbox.nextID == 1)
    }

    @Test func restoredOutboxContinuesAfterItsHighestID() {
        let entries = [Outbox<String>.Entry(id: 7, frame: Data(), message: "a"), .init(id: 9, frame: Data(), message: "b")]
        #expect(Outbox(nextID: 5, entries: entries).nextID == 10)
        #expect(Outbox(nextID: 12, entries: entries).nextID == 12)
    }

    @Test func windowLimitsMessagesInFlightAndAnAcknowledgementLetsTheNextOut() throws {
        var outbox = try filled(5, window: 2)
        #expect(drain(&outbox) == [1, 2])
        #expect(outbox.inFlight == 2)
        #expect(outbox.waiting == 3)
        #expect(outbox.acknowledge(1)?.message == "m1")
        #expect(drain(&outbox) == [3])
        #expect(outbox.acknowledge(2)?.id == 2)
        #expect(outbox.acknowledge(3)?.id == 3)
        #expect(drain(&outbox) == [4, 5])
        #expect(outbox.ids == [4, 5])
    }

    @Test func rewindResendsEveryUnacknowledgedMessageInIDOrder() throws {
        var outbox = try filled(5, window: 3)
        #expect(drain(&outbox) == [1, 2, 3])
        _ = outbox.acknowledge(2)
        outbox.rewind()
        #expect(outbox.inFlight == 0)
        #expect(drain(&outbox) == [1, 3, 4])
        #expect(outbox.resends == 2)  // 1 and 3 went out twice
    }

    @Test func fullOutboxRefusesAndAcknowledgingMakesRoom() throws {
        var outbox = try filled(2, limit: 2)
        #expect(outbox.isFull)
        #expect(throws: Outbox<String>.Refusal.full(limit: 2)) {
            try outbox.append(id: 3, frame: Data(), message: "m3")
        }
        #expect(outbox.nextID == 3)
        _ = outbox.acknowledge(1)
        try outbox.append(id: 3, frame: Data(), message: "m3")
        #expect(outbox.ids == [2, 3])
    }

    @Test func acknowledgingAnUnknownOrWaitingMessage() throws {
        var outbox = try filled(4, window: 2)
        #expect(drain(&outbox) == [1, 2])
        #expect(outbox.acknowledge(9) == nil)
        #expect(outbox.acknowledge(1)?.id == 1)
        #expect(outbox.acknowledge(1) == nil)  // a second answer
        // 4 was never sent on this connection: the in-flight count is unchanged.
        #expect(outbox.acknowledge(4)?.id == 4)
        #expect(outbox.inFlight == 1)
        #expect(drain(&outbox) == [3])
        #expect(outbox.ids == [2, 3])
    }

    @Test func manyAcknowledgementsInOrderKeepTheRestIntact() throws {
        var outbox = try filled(300, limit: 300, window: 300)
        #expect(drain(&outbox).count == 300)
        for id in 1...250 { #expect(outbox.acknowledge(UInt64(id))?.message == "m\(id)") }
        #expect(outbox.ids == Array(251...300).map { UInt64($0) })
        #expect(outbox.inFlight == 50)
        outbox.rewind()
        #expect(outbox.nextToSend()?.message == "m251")
    }

    @Test func slowedDownSendsOneAtATimeUntilEmptyThenTheWholeWindowAgain() throws {
        var outbox = try filled(4, window: 3)
        #expect(drain(&outbox) == [1, 2, 3])
        outbox.slowDown()
        #expect(outbox.currentWindow == 1)
        outbox.rewind()
        #expect(drain(&outbox) == [1])
        #expect(outbox.acknowledge(1)?.id == 1)
        #expect(drain(&outbox) == [2])
        #expect(outbox.acknowledge(2)?.id == 2)
        #expect(outbox.acknowledge(3)?.id == 3)  // answered from the first sending
        #expect(drain(&outbox) == [4])
        #expect(outbox.currentWindow == 1)
        #expect(outbox.acknowledge(4)?.id == 4)
        #expect(outbox.isEmpty)
        #expect(outbox.currentWindow == 3)
        try outbox.append(id: 5, frame: Data(), message: "m5")
        try outbox.append(id: 6, frame: Data(), message: "m6")
        #expect(drain(&outbox) == [5, 6])
    }
}
