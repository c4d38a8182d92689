import AsyncSocket
import Foundation
import NATSClient
import TestSupport

/// Generous for a loaded 2-core machine; every wait ends as soon as its event arrives.
let waitLimit: Duration = .seconds(10)

/// Options for a test's connection to `server`: quick reconnects, a timeout that tolerates load.
func testOptions(_ server: ServerProcess, retryOnFailedConnect: Bool = false) -> NATSConnection.Options {
    NATSConnection.Options(
        servers: [server.natsURL], name: "NATSClientTests", reconnectWait: .milliseconds(100),
        timeout: .seconds(5), retryOnFailedConnect: retryOnFailedConnect)
}

/// Runs `body` with a fresh server and a connection to it; closes both afterwards.
@discardableResult
func withNATS<T>(
    events: @escaping @Sendable (NATSConnection.Event) -> Void = { _ in },
    _ body: (ServerProcess, NATSConnection) async throws -> T
) async throws -> T {
    let server = try await NATSTestServer.start()
    defer { server.stop() }
    let connection = try NATSConnection.connect(testOptions(server), events: events)
    defer { connection.close() }
    return try await body(server, connection)
}

/// A value shared with handlers on libnats' threads, behind a `pthread_mutex_t` (``LockedValue``):
/// ThreadSanitizer sees those lock and unlock. Not Synchronization's `Mutex`, which it does not see
/// whole: it reported the handlers' updates of a `Mutex`-held count as a race.
final class Locked<Value: Sendable>: Sendable {
    private let box: LockedValue<Value>
    init(_ value: Value) { box = LockedValue(value) }
    var value: Value { box.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { box.withLock { body(&$0) } }
}

extension Data {
    /// UTF-8 bytes of `text`, for readable payloads.
    init(text: String) { self.init(text.utf8) }
}
