import AsyncSocket
import Foundation
import TestSupport

/// A TCP server on 127.0.0.1 for tests of a client: writes `greeting` to each connection it accepts,
/// then echoes what it reads. It runs on its sockets' delegate queue (nil: their event loops), with no
/// `Task` in between: a greeter on Swift's cooperative pool (two threads here) waited behind the
/// suite's other tests, and a client's read of the greeting waited past its test's 10 s limit (docs/TESTING.md,
/// "Flaky tests found"). Holds every socket until ``close()``.
final class Greeter: TCPSocketDelegate, Sendable {
    private let greeting: Data
    private let listener: TCPSocket
    private let accepted = LockedValue<[TCPSocket]>([])
    /// The port it listens on.
    var port: UInt16 { listener.localPort }

    init(_ greeting: String) throws {
        self.greeting = Data(greeting.utf8)
        listener = TCPSocket(delegate: nil, delegateQueue: nil)
        listener.delegate = self
        try listener.accept(onInterface: "127.0.0.1", port: 0)
    }

    /// Stops listening and disconnects every accepted connection.
    func close() {
        listener.disconnect()
        for socket in accepted.withLock({ $0 }) { socket.disconnect() }
    }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        accepted.withLock { $0.append(newSocket) }
        newSocket.write(greeting, withTimeout: -1, tag: 0)
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }
}
