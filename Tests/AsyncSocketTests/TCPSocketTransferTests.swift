import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport

@Suite struct TCPSocketTransferTests {
    @Test func twoMessagesWrittenBackToBackArriveAsTwo() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        pair.client.write(Data("hello\n".utf8), withTimeout: -1, tag: 1)
        pair.client.write(Data("world\n".utf8), withTimeout: -1, tag: 2)
        accepted.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 10)
        accepted.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 11)
        let first = try await pair.serverDelegate.events.next()
        let second = try await pair.serverDelegate.events.next()
        #expect(first.description == #"read("hello\n", tag: 10)"#)
        #expect(second.description == #"read("world\n", tag: 11)"#)
        let writes = try await pair.clientDelegate.events.next(2)
        #expect(writes.map(\.description) == ["wrote(tag: 1)", "wrote(tag: 2)"])
    }

    @Test func headerThenBodyReadsTwoLengthPrefixedMessages() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        // Both frames in one write: a glued "sticky packet".
        var bytes = Data()
        for body in ["first", "second!"] {
            bytes.append(contentsOf: withUnsafeBytes(of: UInt32(body.utf8.count).bigEndian, Array.init))
            bytes.append(contentsOf: body.utf8)
        }
        pair.client.write(bytes, withTimeout: -1, tag: 0)
        accepted.readData(toLength: 4, withTimeout: -1, tag: 1)
        var bodies: [String] = []
        for _ in 0..<2 {
            guard case .read(let header, 1) = try await pair.serverDelegate.events.next() else { Issue.record("expected header"); return }
            let length = header.reduce(0) { $0 << 8 | UInt($1) }
            accepted.readData(toLength: length, withTimeout: -1, tag: 2)
            guard case .read(let body, 2) = try await pair.serverDelegate.events.next() else { Issue.record("expected body"); return }
            bodies.append(String(decoding: body, as: UTF8.self))
            accepted.readData(toLength: 4, withTimeout: -1, tag: 1)
        }
        #expect(bodies == ["first", "second!"])
    }

    @Test func tenThousandMessagesInABurstArriveCompleteAndInOrder() async throws {
        let count = 10_000
        let pair = try LoopbackPair(
            onAccept: { socket in
                socket.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 0)
            },
            onServerRead: { socket, _, tag in
                socket.readData(to: TCPSocket.lfData, withTimeout: -1, tag: tag + 1)
            })
        defer { pair.close() }
        _ = try await pair.connect()
        for index in 0..<count {
            pair.client.write(Data("message \(index)\n".utf8), withTimeout: -1, tag: index)
        }
        for index in 0..<count {
            let event = try await pair.serverDelegate.events.next()
            guard case .read(let data, let tag) = event, tag == index,
                String(decoding: data, as: UTF8.self) == "message \(index)\n"
            else {
                Issue.record("message \(index): got \(event)")
                return
            }
        }
        let writes = try await pair.clientDelegate.events.next(count)
        #expect(writes.map(\.description) == (0..<count).map { "wrote(tag: \($0))" })
    }

    @Test func writesQueuedBeforeConnectArrive() async throws {
        let pair = try LoopbackPair(onAccept: { socket in
            socket.readData(toLength: 12, withTimeout: -1, tag: 7)
        })
        defer { pair.close() }
        try pair.client.connect(toHost: "127.0.0.1", onPort: pair.port, withTimeout: TestTiming.hangTimeout(5))
        pair.client.write(Data("queued ".utf8), withTimeout: -1, tag: 1)
        pair.client.write(Data("early".utf8), withTimeout: -1, tag: 2)
        let events = try await pair.serverDelegate.events.next(2)
        #expect(events[1].description == #"read("queued early", tag: 7)"#)
        let clientEvents = try await pair.clientDelegate.events.next(3)
        #expect(clientEvents.map(\.description) == ["connected(127.0.0.1:\(pair.port))", "wrote(tag: 1)", "wrote(tag: 2)"])
    }
}

@Suite struct AcceptedSocketTests {
    /// Regression: a read queued in the accept callback, before the new socket was registered with its
    /// loop, left the socket never watched for reading.
    @Test func readQueuedInTheAcceptCallbackIsServedOnEveryLoop() async throws {
        let group = EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let serverDelegate = RecordingDelegate(onAccept: { $0.readData(toLength: 2, withTimeout: -1, tag: 9) })
        let server = TCPSocket(delegate: serverDelegate, delegateQueue: nil, group: group)
        try server.accept(onInterface: "127.0.0.1", port: 0)
        defer { server.disconnect() }
        var clients: [(TCPSocket, RecordingDelegate)] = []
        for index in 0..<6 {
            let delegate = RecordingDelegate()
            let client = TCPSocket(delegate: delegate, delegateQueue: nil, group: group)
            try client.connect(toHost: "127.0.0.1", onPort: server.localPort, withTimeout: TestTiming.hangTimeout(5))
            client.write(Data("c\(index)".utf8), withTimeout: -1, tag: 0)
            clients.append((client, delegate))
        }
        var received: [String] = []
        while received.count < 6 {
            if case .read(let data, 9) = try await serverDelegate.events.next() {
                received.append(String(decoding: data, as: UTF8.self))
            }
        }
        #expect(received.sorted() == ["c0", "c1", "c2", "c3", "c4", "c5"])
        for (client, _) in clients { client.disconnect() }
        for socket in serverDelegate.accepted { socket.disconnect() }
    }
}
