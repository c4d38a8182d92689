import Foundation
import NATSClient
import Testing
import TestSupport

@Suite struct JetStreamTests {
    static let orders = JetStream.StreamConfiguration(name: "ORDERS", subjects: ["orders.>"], duplicateWindow: .seconds(60))

    @Test func publishesAreSequencedAndDuplicatesDropped() async throws {
        try await withNATS { _, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(Self.orders)
            #expect(try jetStream.publish("orders.1", Data(text: "a")) == .init(stream: "ORDERS", sequence: 1, duplicate: false))
            #expect(try jetStream.publish("orders.2", Data(text: "b")) == .init(stream: "ORDERS", sequence: 2, duplicate: false))
            #expect(
                try jetStream.publish("orders.3", Data(text: "c"), messageID: "m-1")
                    == .init(stream: "ORDERS", sequence: 3, duplicate: false))
            #expect(
                try jetStream.publish("orders.3", Data(text: "c again"), messageID: "m-1")
                    == .init(stream: "ORDERS", sequence: 3, duplicate: true))
            #expect(try jetStream.message(stream: "ORDERS", sequence: 3)?.data == Data(text: "c"))
            #expect(try jetStream.message(stream: "ORDERS", sequence: 4) == nil)
            // Adding it again with other limits updates it.
            var limited = Self.orders
            limited.maxMessagesPerSubject = 10
            try jetStream.addOrUpdateStream(limited)
            try jetStream.addOrUpdateStream(limited)
            #expect(try jetStream.publish("orders.4", Data(text: "d")).sequence == 4)
        }
    }

    @Test func aContextTakesADomainOrAPrefix() async throws {
        try await withNATS { _, connection in
            #expect(throws: NATSError.invalid("give a JetStream domain or an API prefix, not both")) {
                try connection.jetStream(domain: "hub", prefix: "$JS.hub.API")
            }
            // The default prefix spelled out (with libnats' tolerated trailing dot) is the default context.
            let jetStream = try connection.jetStream(prefix: "$JS.API.", timeout: .seconds(5))
            #expect(jetStream.timeout == .seconds(5))
            let bucket = try jetStream.keyValue(bucket: "prefixed")
            #expect(try bucket.put("k", Data(text: "v")) == 1)
            #expect(try bucket.get("k")?.value == Data(text: "v"))
            // This server has no JetStream domain "elsewhere": nobody answers its API subjects.
            #expect(throws: NATSError.noResponders) {
                try connection.jetStream(domain: "elsewhere").addOrUpdateStream(.init(name: "X", subjects: ["x"]))
            }
        }
    }

    @Test func anExpectedLastSubjectSequenceIsCompareAndSet() async throws {
        try await withNATS { _, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(Self.orders)
            #expect(try jetStream.publish("orders.x", Data(text: "1"), expectedLastSubjectSequence: 0).sequence == 1)
            #expect(throws: NATSError.wrongLastSequence) {
                try jetStream.publish("orders.x", Data(text: "again new"), expectedLastSubjectSequence: 0)
            }
            #expect(try jetStream.publish("orders.y", Data(text: "other subject")).sequence == 2)
            #expect(try jetStream.publish("orders.x", Data(text: "2"), expectedLastSubjectSequence: 1).sequence == 3)
            #expect(throws: NATSError.wrongLastSequence) {
                try jetStream.publish("orders.x", Data(text: "stale"), expectedLastSubjectSequence: 1)
            }
            #expect(try jetStream.lastMessage(stream: "ORDERS", subject: "orders.x")?.data == Data(text: "2"))
        }
    }

    @Test func storedMessagesReadBackBySequenceAndLastPerSubject() async throws {
        try await withNATS { _, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(Self.orders)
            let before = Date()
            _ = try jetStream.publish("orders.1", Data(text: "first"), headers: ["Kind": "new"])
            _ = try jetStream.publish("orders.2", Data(text: "second"))
            _ = try jetStream.publish("orders.1", Data(text: "third"), headers: ["Kind": "changed"], messageID: "id-3")

            let first = try #require(try jetStream.message(stream: "ORDERS", sequence: 1))
            #expect(first.subject == "orders.1")
            #expect(first.sequence == 1)
            #expect(first.data == Data(text: "first"))
            #expect(first.headers == ["Kind": "new"])
            #expect(abs(first.time.timeIntervalSince(before)) < 60)

            let last = try #require(try jetStream.lastMessage(stream: "ORDERS", subject: "orders.1"))
            #expect(last.sequence == 3)
            #expect(last.data == Data(text: "third"))
            #expect(last.headers == ["Kind": "changed", "Nats-Msg-Id": "id-3"])

            #expect(try jetStream.message(stream: "ORDERS", sequence: 99) == nil)
            #expect(try jetStream.lastMessage(stream: "ORDERS", subject: "orders.none") == nil)
            #expect(throws: NATSError.jetStream(errorCode: 10059, text: "stream not found")) {
                try jetStream.message(stream: "MISSING", sequence: 1)
            }
            #expect(throws: NATSError.noResponders) { try jetStream.publish("unstored.subject", Data()) }
        }
    }

    @Test func subscribeNewDeliversOnlyLaterMessagesInOrder() async throws {
        try await withNATS { _, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(Self.orders)
            _ = try jetStream.publish("orders.old", Data(text: "before"))
            let received = EventRecorder<JetStream.StoredMessage>()
            let subscription = try jetStream.subscribeNew(filter: "orders.>") { received.record($0) }
            for index in 1...5 {
                _ = try jetStream.publish("orders.\(index)", Data(text: "m\(index)"), headers: ["N": "\(index)"])
            }
            let messages = try await received.next(5, within: waitLimit)
            #expect(messages.map(\.sequence) == [2, 3, 4, 5, 6])
            #expect(messages.map(\.subject) == (1...5).map { "orders.\($0)" })
            #expect(messages.map(\.data) == (1...5).map { Data(text: "m\($0)") })
            #expect(messages.map(\.headers) == (1...5).map { ["N": "\($0)"] })
            subscription.unsubscribe()
            _ = try jetStream.publish("orders.after", Data(text: "after"))
            try connection.flush()
            #expect(received.all.count == 5)
        }
    }
}
