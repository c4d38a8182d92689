@testable import ChatClient
@testable import ChatSQLite
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

/// The client's persisted delivery state: outbox, next id, positions, client instance.
@Suite(.offThePool) struct SQLiteDeliveryStateStoreTests {
    @Test func aNewFileHasNothingAndANewClientInstance() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteDeliveryStateStore(path: directory.appendingPathComponent("client.sqlite").path)
            defer { store.close() }
            #expect(try store.load() == DeliveryState(nextID: 1, outbox: [], positions: [:]))
            #expect(SQLiteDeliveryStateStore.isClientInstance(store.clientInstance))
            let other = try SQLiteDeliveryStateStore(path: directory.appendingPathComponent("other.sqlite").path)
            defer { other.close() }
            #expect(other.clientInstance != store.clientInstance)
        }
    }

    @Test func theStateSurvivesAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("client.sqlite").path
            let store = try SQLiteDeliveryStateStore(path: path)
            for id: UInt64 in [1, 2, 3, 5] { try store.enqueue(id: id, frame: Data([0x00, 0x02, UInt8(id)])) }
            try store.enqueue(id: 4, frame: Data())  // late, lower: the next id stays past 5
            try store.remove(ids: [2, 9])
            try store.setPositions(["room": 12, "direct:ann bob": 3])
            try store.setPositions(["direct:ann bob": 4])  // merged; "room" stays
            let instance = store.clientInstance
            store.close()

            let reopened = try SQLiteDeliveryStateStore(path: path)
            defer { reopened.close() }
            #expect(reopened.clientInstance == instance)
            #expect(
                try reopened.load()
                    == DeliveryState(
                        nextID: 6,
                        outbox: [
                            .init(id: 1, frame: Data([0x00, 0x02, 1])), .init(id: 3, frame: Data([0x00, 0x02, 3])),
                            .init(id: 4, frame: Data()), .init(id: 5, frame: Data([0x00, 0x02, 5]))
                        ],
                        positions: ["room": 12, "direct:ann bob": 4]))
            try reopened.remove(ids: [1, 3, 4, 5])
            #expect(try reopened.load() == DeliveryState(nextID: 6, outbox: [], positions: ["room": 12, "direct:ann bob": 4]))
        }
    }

    @Test func aRepeatedOrOversizedIdIsRefused() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteDeliveryStateStore(path: directory.appendingPathComponent("client.sqlite").path)
            defer { store.close() }
            try store.enqueue(id: 1, frame: Data([1]))
            let error = #expect(throws: SQLiteError.self) { try store.enqueue(id: 1, frame: Data([2])) }
            #expect(error?.code == 19)  // SQLITE_CONSTRAINT
            #expect(throws: StoreError.outOfRange("message id \(UInt64.max)")) { try store.enqueue(id: .max, frame: Data()) }
            #expect(try store.load() == DeliveryState(nextID: 2, outbox: [.init(id: 1, frame: Data([1]))], positions: [:]))
        }
    }

    @Test func aStoreFileIsNotAClientFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            try SQLiteMessageStore(path: path).close()
            #expect(throws: StoreError.notAStore(path: path)) { try SQLiteDeliveryStateStore(path: path) }
        }
    }
}
