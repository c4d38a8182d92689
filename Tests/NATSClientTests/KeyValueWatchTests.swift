import Foundation
import NATSClient
import Testing
import TestSupport

@Suite struct KeyValueWatchTests {
    @Test func watchAllGetsTheCurrentValuesThenChanges() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "watched")
            #expect(try bucket.put("a", Data(text: "1")) == 1)
            #expect(try bucket.put("b", Data(text: "2")) == 2)
            #expect(try bucket.put("a", Data(text: "3")) == 3)
            try bucket.delete("b")  // revision 4

            let changes = EventRecorder<KeyValueBucket.Change>()
            let watch = try bucket.watchAll { changes.record($0) }
            let initial = try await changes.next(3, within: waitLimit)
            #expect(initial.count == 3)
            #expect(initial[0] == .put(.init(key: "a", value: Data(text: "3"), revision: 3, created: try created(initial[0]))))
            #expect(initial[1] == .delete(key: "b", revision: 4))
            #expect(initial[2] == .initialValuesDone)

            #expect(try bucket.put("c", Data(text: "5")) == 5)
            try bucket.delete("a")  // revision 6
            let put = try await changes.next(within: waitLimit)
            #expect(put == .put(.init(key: "c", value: Data(text: "5"), revision: 5, created: try created(put))))
            #expect(try await changes.next(within: waitLimit) == .delete(key: "a", revision: 6))

            watch.stop()
            watch.stop()  // idempotent
            _ = try bucket.put("d", Data(text: "after"))
            _ = try bucket.get("d")  // a round trip after the put
            #expect(changes.all.count == 5)
        }
    }

    @Test func anEmptyBucketsWatchStartsWithInitialValuesDone() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "empty")
            let changes = EventRecorder<KeyValueBucket.Change>()
            let watch = try bucket.watchAll { changes.record($0) }
            defer { watch.stop() }
            #expect(try await changes.next(within: waitLimit) == .initialValuesDone)
            #expect(try bucket.create("k", Data(text: "v")) == 1)
            let put = try await changes.next(within: waitLimit)
            #expect(put == .put(.init(key: "k", value: Data(text: "v"), revision: 1, created: try created(put))))
        }
    }

    @Test func stopFromInsideTheHandlerEndsTheWatch() async throws {
        try await withNATS { _, connection in
            let bucket = try connection.jetStream().keyValue(bucket: "selfstop")
            let changes = EventRecorder<KeyValueBucket.Change>()
            let holder = Locked<KeyValueWatch?>(nil)
            let watch = try bucket.watchAll { change in
                changes.record(change)
                if case .put = change { holder.value?.stop() }
            }
            holder.update { $0 = watch }
            #expect(try await changes.next(within: waitLimit) == .initialValuesDone)
            _ = try bucket.put("x", Data(text: "1"))
            _ = try await changes.next(within: waitLimit)
            _ = try bucket.put("y", Data(text: "2"))
            _ = try bucket.get("y")
            watch.stop()
            #expect(changes.all.count == 2)
            holder.update { $0 = nil }
        }
    }
}

/// The `created` time of a `.put`, which the test cannot know in advance.
private func created(_ change: KeyValueBucket.Change) throws -> Date {
    guard case .put(let entry) = change else { throw WaitTimedOut(description: "expected a put, got \(change)") }
    return entry.created
}
