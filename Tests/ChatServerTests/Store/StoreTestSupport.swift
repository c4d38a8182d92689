import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import ChatTestSupport
import Foundation
import NATSClient
import Testing
import TestSupport

/// The three ``MessageStore`` implementations, so one suite runs against all.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory, sqlite, jetstream

    var testDescription: String { rawValue }

    /// Runs `body` with a new, empty store of this kind (SQLite: in a temporary directory, removed after;
    /// JetStream: on a nats-server of its own, stopped after), on a thread of its own: a store's calls
    /// block (JetStream's are round trips to NATS), which on Swift's cooperative pool would stall the
    /// tests beside it.
    func withStore<Result: Sendable>(_ body: @escaping @Sendable (any MessageStore) throws -> Result) async throws -> Result {
        switch self {
        case .memory:
            return try await runOnAThread { try body(InMemoryMessageStore()) }
        case .sqlite:
            return try await runOnAThread {
                try withTemporaryDirectory { directory in
                    let store = try SQLiteMessageStore(path: directory.appendingPathComponent("chat.sqlite").path)
                    defer { store.close() }
                    return try body(store)
                }
            }
        case .jetstream:
            let server = try await NATSTestServer.start()
            defer { server.stop() }
            return try await runOnAThread {
                let connection = try NATSConnection.connect(.init(servers: [server.natsURL], timeout: .seconds(10)))
                defer { connection.close() }
                return try body(try JetStreamMessageStore(connection: connection))
            }
        }
    }
}

/// A fixed time to store messages at: 2023-11-14 22:13:20 UTC.
let storeEpoch = Date(timeIntervalSince1970: 1_700_000_000)

extension NewMessage {
    /// A message from `sender` in `conversation`, client instance "a…a" unless given, at `storeEpoch` + `seconds`.
    static func make(
        _ sender: String, in conversation: ConversationID, id: UInt64, text: String? = nil,
        instance: String = String(repeating: "a", count: 32), seconds: Double = 0
    ) -> NewMessage {
        NewMessage(
            conversation: conversation, sender: sender, text: text ?? "\(sender) #\(id)",
            time: storeEpoch.addingTimeInterval(seconds), clientInstance: instance, clientID: id)
    }
}
