import Foundation
import NATSClient
import Testing
import TestSupport

@Suite struct KeyValueTests {
    @Test func getPutCreateUpdateDeleteKeys() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "config")
            #expect(try bucket.keys() == [])
            #expect(try bucket.get("a") == nil)

            #expect(try bucket.put("a", Data(text: "1")) == 1)
            let a = try #require(try bucket.get("a"))
            #expect(a.key == "a")
            #expect(a.value == Data(text: "1"))
            #expect(a.revision == 1)

            #expect(throws: NATSError.keyExists) { try bucket.create("a", Data(text: "x")) }
            #expect(try bucket.create("b", Data(text: "2")) == 2)
            #expect(try bucket.update("a", Data(text: "3"), lastRevision: 1) == 3)
            #expect(throws: NATSError.wrongLastSequence) { try bucket.update("a", Data(text: "stale"), lastRevision: 1) }
            #expect(try bucket.get("a")?.value == Data(text: "3"))
            #expect(try bucket.keys().sorted() == ["a", "b"])

            try bucket.delete("a")
            #expect(try bucket.get("a") == nil)
            #expect(try bucket.keys() == ["b"])
            #expect(throws: NATSError.wrongLastSequence) { try bucket.update("a", Data(text: "gone"), lastRevision: 3) }
            // A deleted key has no value, so create writes it again (over the delete marker, revision 4).
            #expect(try bucket.create("a", Data(text: "5")) == 5)
            #expect(
                try bucket.get("a")
                    == .init(key: "a", value: Data(text: "5"), revision: 5, created: try #require(try bucket.get("a")).created))
            try bucket.delete("never-there")

            let invalid = #expect(throws: NATSError.self) { try bucket.put("has space", Data()) }
            #expect(
                invalid
                    == .invalid(
                        "KV key \"has space\" must be [-/_=.a-zA-Z0-9]+ without leading, trailing or double dots; see encodeKey(_:)"))
            #expect(
                throws: NATSError.invalid(
                    "KV key \".leading\" must be [-/_=.a-zA-Z0-9]+ without leading, trailing or double dots; see encodeKey(_:)")
            ) {
                try bucket.get(".leading")
            }
            #expect(throws: NATSError.invalid("revisions start at 1; create(_:_:) writes a key that has none")) {
                try bucket.update("b", Data(), lastRevision: 0)
            }

            // Binding the existing bucket, with the same or other settings, sees the same data.
            #expect(try connection.jetStream().keyValue(bucket: "config").get("b")?.value == Data(text: "2"))
            #expect(try connection.jetStream().keyValue(bucket: "config", history: 5).get("b")?.revision == 2)
        }
    }

    @Test func aValuePastMaxAgeIsGoneWithoutAWatchEvent() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "short", maxAge: .seconds(1))
            let changes = EventRecorder<KeyValueBucket.Change>()
            let watch = try bucket.watchAll { changes.record($0) }
            defer { watch.stop() }
            #expect(try await changes.next(within: waitLimit) == .initialValuesDone)
            #expect(try bucket.put("k", Data(text: "v")) == 1)
            #expect(try bucket.get("k")?.value == Data(text: "v"))
            let deadline = ContinuousClock.now + TestTiming.hangLimit(waitLimit)
            var value = try bucket.get("k")
            while value != nil && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))  // polling, bounded by the deadline
                value = try bucket.get("k")
            }
            #expect(value == nil)
            #expect(try bucket.keys() == [])
            // nats-server 2.9 removes aged-out messages without a marker: the watch saw the put,
            // and the next change it sees is a later put, not a delete of "k".
            let put = try await changes.next(within: waitLimit)
            guard case .put(let first) = put else { Issue.record("expected the put of k, got \(put)"); return }
            #expect(first.key == "k")
            #expect(try bucket.put("m", Data(text: "later")) == 2)
            let next = try await changes.next(within: waitLimit)
            guard case .put(let entry) = next else { Issue.record("expected the put of m, got \(next)"); return }
            #expect(entry.key == "m")
            #expect(entry.revision == 2)
        }
    }

    @Test func keysEncodeReversibly() {
        #expect(KeyValueBucket.encodeKey("alice") == "616c696365")
        #expect(KeyValueBucket.encodeKey("") == "=")
        #expect(KeyValueBucket.encodeKey("É") == "c389")
        for text in ["alice", "", "Ünï 🙂/x.y", "a b\tc\n", "..", "*>"] {
            let key = KeyValueBucket.encodeKey(text)
            #expect(KeyValueBucket.isValidKey(key))
            #expect(KeyValueBucket.decodeKey(key) == text)
        }
        #expect(KeyValueBucket.decodeKey("abc") == nil)
        #expect(KeyValueBucket.decodeKey("zz") == nil)
        #expect(KeyValueBucket.decodeKey("AB") == nil)
        #expect(KeyValueBucket.decodeKey("ff") == nil)  // not UTF-8
        #expect(KeyValueBucket.isValidKey("users/alice_1=ok-2.x"))
        for invalid in ["", ".a", "a.", "a..b", "a b", "a*", "a>", "é", "a\\b"] {
            #expect(!KeyValueBucket.isValidKey(invalid))
        }
    }
}
