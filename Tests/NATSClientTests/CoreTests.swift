import Foundation
import NATSClient
import Testing
import TestSupport

@Suite struct CoreTests {
    @Test func publishAndSubscribeRoundTripWithHeaders() async throws {
        try await withNATS { _, connection in
            let received = EventRecorder<NATSMessage>()
            let subscription = try connection.subscribe("greet.*") { received.record($0) }
            defer { subscription.unsubscribe() }
            try connection.flush()
            try connection.publish("greet.alice", Data(text: "hello"), headers: ["X-Trace": "t-1", "Lang": "en"])
            try connection.publish("greet.bob", Data())
            try connection.publish("other.alice", Data(text: "not for us"))

            let first = try await received.next(within: waitLimit)
            #expect(
                first
                    == NATSMessage(subject: "greet.alice", reply: nil, data: Data(text: "hello"), headers: ["X-Trace": "t-1", "Lang": "en"])
            )
            let second = try await received.next(within: waitLimit)
            #expect(second == NATSMessage(subject: "greet.bob", reply: nil, data: Data(), headers: [:]))
            #expect(connection.isConnected)
        }
    }

    @Test func aQueueGroupDeliversEachMessageToOneMember() async throws {
        try await withNATS { _, connection in
            let received = EventRecorder<String>()
            let first = try connection.subscribe("jobs", queueGroup: "workers") {
                received.record(String(decoding: $0.data, as: UTF8.self))
            }
            let second = try connection.subscribe("jobs", queueGroup: "workers") {
                received.record(String(decoding: $0.data, as: UTF8.self))
            }
            defer { first.unsubscribe(); second.unsubscribe() }
            try connection.flush()
            for index in 0..<20 { try connection.publish("jobs", Data(text: "\(index)")) }
            let payloads = try await received.next(20, within: waitLimit)
            #expect(Set(payloads) == Set((0..<20).map(String.init)))
            // A round trip after the last publish: a 21st copy would have arrived by now.
            try connection.flush()
            #expect(received.all.count == 20)
        }
    }

    /// libnats is opened with a lock spin count of 0 before the first connection: its mutexes do not
    /// busy-wait (2,000 tries by default), which cost a cluster node 8 % of its CPU on two cores.
    @Test func libnatsLocksWithoutSpinning() async throws {
        try await withNATS { _, connection in
            #expect(connection.isConnected)
            let everything = try #require(dlopen(nil, RTLD_NOW))  // the program and the libraries it loaded
            defer { dlclose(everything) }
            let symbol = try #require(dlsym(everything, "gLockSpinCount"))
            #expect(symbol.load(as: Int64.self) == 0)
        }
    }

    @Test func requestGetsTheResponderAnswer() async throws {
        try await withNATS { _, connection in
            let responder = try connection.subscribe("echo") { message in
                guard let reply = message.reply else { return }
                try? connection.publish(reply, Data(message.data.reversed()), headers: ["Echoed": message.headers["Ask"] ?? "-"])
            }
            defer { responder.unsubscribe() }
            try connection.flush()
            let answer = try connection.request("echo", Data(text: "abc"), headers: ["Ask": "1"], timeout: .seconds(5))
            #expect(answer.data == Data(text: "cba"))
            #expect(answer.headers == ["Echoed": "1"])
            #expect(answer.reply == nil)
            // Without a timeout, the connection's (5 s here).
            #expect(try connection.request("echo", Data(text: "xy")).data == Data(text: "yx"))
        }
    }

    @Test func requestWithoutResponderThrowsNoResponders() async throws {
        try await withNATS { _, connection in
            #expect(throws: NATSError.noResponders) {
                try connection.request("nobody.home", Data(text: "?"), timeout: .seconds(5))
            }
        }
    }

    @Test func noHandlerRunsAfterUnsubscribeReturns() async throws {
        try await withNATS { _, connection in
            let unsubscribed = Locked(false)
            let lateCalls = Locked(0)
            let delivered = EventRecorder<Int>()
            let subscription = try connection.subscribe("burst") { _ in
                if unsubscribed.value { lateCalls.update { $0 += 1 } }
                delivered.record(1)
                usleep(200)  // work in the handler, so unsubscribe() meets one in progress
                if unsubscribed.value { lateCalls.update { $0 += 1 } }
            }
            try connection.flush()
            for index in 0..<500 { try connection.publish("burst", Data(text: "\(index)")) }
            _ = try await delivered.next(within: waitLimit)
            subscription.unsubscribe()
            unsubscribed.update { $0 = true }
            subscription.unsubscribe()  // idempotent
            for index in 0..<10 { try connection.publish("burst", Data(text: "late \(index)")) }
            try connection.flush()
            #expect(lateCalls.value == 0)
            #expect(!subscription.isValid)
            #expect(delivered.all.count <= 500)
        }
    }

    @Test func connectingToNoServerThrowsInWords() async throws {
        let port = ReservedLoopbackPort()
        defer { port.release() }
        let options = NATSConnection.Options(servers: ["nats://127.0.0.1:\(port.port)"], timeout: .seconds(1))
        do {
            _ = try NATSConnection.connect(options)
            Issue.record("connected to a port nothing listens on")
        } catch {
            // NATS_NO_SERVER, in natsStatus_GetText's words.
            guard case .status(let code, let text) = error else { Issue.record("\(error)"); return }
            #expect(code == 6)
            #expect(text.hasPrefix("No server available for connection"))
            #expect(error.description.hasPrefix("libnats error 6: No server available for connection"))
        }
        #expect(throws: NATSError.invalid("no server URL")) { try NATSConnection.connect(NATSConnection.Options(servers: [])) }
    }
}

/// libnats opens its socket without close-on-exec (Debian's libnats 3.3: no `SOCK_CLOEXEC`, and no
/// option for it), so any child spawned without closing descriptors inherits it: the NATS tests start
/// nats-server and other children beside each other, and a child holding another test's connection
/// keeps it from ending. The tests' children therefore close every descriptor above 2 at their start.
@Suite struct NATSDescriptorInheritanceTests {
    @Test func theTestsChildrenInheritNoNATSConnectionThoughLibnatsLeavesItOpenOnExec() async throws {
        let nats = try await NATSTestServer.start()
        defer { nats.stop() }
        let connection = try await runOnAThread { try NATSConnection.connect(.init(servers: [nats.natsURL])) }
        defer { connection.close() }
        let ours = try ChildProcess.loopbackSockets(connectedTo: nats.port)
        #expect(ours.count == 1, "\(ours)")
        func leaked(_ inherited: [String]) -> [String] { inherited.filter { line in ours.contains { line.hasSuffix(" -> \($0)") } } }
        // What libnats does (if this starts failing, libnats sets close-on-exec now: say so in NATSConnection's docs).
        #expect(leaked(try await ChildProcess.inheritedDescriptors()).count == 1)
        // What a test's child gets: nothing but its standard input, output and error.
        #expect(try await ChildProcess.inheritedDescriptors(inheriting: false) == [])
    }
}
