import Foundation
import NATSClient
import Testing
import TestSupport

/// ``RequestBatcher``: many requests in one round trip, and the JetStream reads made through it
/// (a KV direct get, a stream's last message), which must say what the one-by-one calls say.
@Suite struct RequestBatcherTests {
    @Test func aBatchGetsEveryAnswerInTheOrderOfItsRequests() async throws {
        try await withNATS { _, connection in
            // The responder answers the three requests of each batch in reverse order.
            let held = Locked<[NATSMessage]>([])
            let responder = try connection.subscribe("double") { message in
                var batch: [NATSMessage] = []
                held.update {
                    $0.append(message)
                    if $0.count == 3 { (batch, $0) = ($0, []) }
                }
                for request in batch.reversed() {
                    guard let reply = request.reply, let number = Int(String(decoding: request.data, as: UTF8.self)) else { continue }
                    try? connection.publish(reply, Data(text: String(number * 2)))
                }
            }
            defer { responder.unsubscribe() }
            try connection.flush()
            let batcher = try RequestBatcher(connection: connection)
            for round in 0..<2 {
                let answers = try batcher.requests((1...3).map { (subject: "double", data: Data(text: String($0 + round * 10))) })
                #expect(answers.map { String(decoding: $0.data, as: UTF8.self) } == (1...3).map { String(($0 + round * 10) * 2) })
            }
            #expect(try batcher.requests([]).isEmpty)
        }
    }

    @Test func aBatchWithARequestNobodyAnswersThrowsNoRespondersOrTimeout() async throws {
        try await withNATS { _, connection in
            let responder = try connection.subscribe("echo") { message in
                if let reply = message.reply { try? connection.publish(reply, message.data) }
            }
            let silent = try connection.subscribe("silent") { _ in }
            defer { responder.unsubscribe(); silent.unsubscribe() }
            try connection.flush()
            let batcher = try RequestBatcher(connection: connection)
            #expect(throws: NATSError.noResponders) {
                try batcher.requests([(subject: "echo", data: Data(text: "a")), (subject: "nobody.here", data: Data())])
            }
            #expect(throws: NATSError.timeout) {
                try batcher.requests(
                    [(subject: "echo", data: Data(text: "a")), (subject: "silent", data: Data())], timeout: .milliseconds(200))
            }
            #expect(throws: NATSError.invalid("the subject is empty")) { try batcher.requests([(subject: "", data: Data())]) }
            // The batcher goes on after both.
            #expect(try batcher.requests([(subject: "echo", data: Data(text: "b"))]).map(\.data) == [Data(text: "b")])
        }
    }

    @Test func aKeyValueGetThroughABatchSaysWhatGetSays() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "batch")
            _ = try bucket.put("kept", Data(text: "1"))
            _ = try bucket.put("kept", Data(text: "2"))
            _ = try bucket.put("deleted", Data(text: "3"))
            try bucket.delete("deleted")
            _ = try bucket.put("empty", Data())
            let keys = ["kept", "deleted", "never", "empty"]
            let batcher = try RequestBatcher(connection: connection)
            let answers = try batcher.requests(keys.map { try bucket.getRequest(for: $0) })
            let entries = try zip(keys, answers).map { try KeyValueBucket.entry(of: $0, from: $1) }
            #expect(entries == (try keys.map { try bucket.get($0) }))
            #expect(entries.map { $0?.value } == [Data(text: "2"), nil, nil, Data()])
            #expect(entries.map { $0?.revision } == [2, nil, nil, 5])
            let created = try #require(entries[0]?.created)
            #expect(abs(created.timeIntervalSinceNow) < 60)
        }
    }

    @Test func keyValuePutsThroughABatchAreAcknowledgedWithTheirRevisions() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "puts")
            _ = try bucket.put("a", Data(text: "0"))
            let batcher = try RequestBatcher(connection: connection)
            let answers = try batcher.requests([
                try bucket.putRequest(for: "a", Data(text: "1")), try bucket.putRequest(for: "b", Data(text: "2"))
            ])
            let acks = try answers.map { try JetStream.publishAck(from: $0) }
            #expect(
                acks == [.init(stream: "KV_puts", sequence: 2, duplicate: false), .init(stream: "KV_puts", sequence: 3, duplicate: false)])
            #expect(try bucket.get("a")?.value == Data(text: "1"))
            #expect(try bucket.get("b")?.revision == 3)
            #expect(
                throws: NATSError.invalid(
                    #"KV key "has space" must be [-/_=.a-zA-Z0-9]+ without leading, trailing or double dots; see encodeKey(_:)"#)
            ) { try bucket.putRequest(for: "has space", Data()) }
            let refused = NATSMessage(
                subject: "x", data: Data(text: #"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 1"}}"#))
            #expect(throws: NATSError.jetStream(errorCode: 10071, text: "wrong last sequence: 1")) {
                try JetStream.publishAck(from: refused)
            }
        }
    }

    @Test func aStreamsLastMessageThroughABatchSaysWhatLastMessageSays() async throws {
        try await withNATS { _, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(.init(name: "ORDERS", subjects: ["orders.>"]))
            _ = try jetStream.publish("orders.a.1", Data(text: "x"))
            _ = try jetStream.publish("orders.b.1", Data(text: "y"))
            _ = try jetStream.publish("orders.a.2", Data(text: "z"))
            let subjects = ["orders.a.*", "orders.b.*", "orders.c.*", "orders.a.1"]
            let batcher = try RequestBatcher(connection: connection)
            let answers = try batcher.requests(subjects.map { try jetStream.lastMessageRequest(stream: "ORDERS", subject: $0) })
            let found = try answers.map { try JetStream.lastMessageSubject(from: $0) }
            #expect(found.map { $0.map { "\($0.subject) \($0.sequence)" } } == ["orders.a.2 3", "orders.b.1 2", nil, "orders.a.1 1"])
            let oneByOne = try subjects.map { try jetStream.lastMessage(stream: "ORDERS", subject: $0) }
            #expect(oneByOne.map { $0.map { "\($0.subject) \($0.sequence)" } } == found.map { $0.map { "\($0.subject) \($0.sequence)" } })
            let missing = try batcher.requests([try jetStream.lastMessageRequest(stream: "NO_SUCH", subject: "x")])
            #expect(throws: NATSError.jetStream(errorCode: 10059, text: "stream not found")) {
                try JetStream.lastMessageSubject(from: missing[0])
            }
        }
    }
}
