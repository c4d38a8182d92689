import AsyncSocket
import FramedSocket
import Foundation
import SocketBench
import SocketFraming
import TestSupport
import Testing
@testable import ChatBench
@testable import ChatProtocol

/// A version 2 chat server that records every message it reads, accepts every login (resume token
/// `T` and the connection's number) and answers nothing else unless told to.
private final class RecordingChatServer: TCPSocketDelegate, @unchecked Sendable {
    let messages = EventRecorder<ChatMessage>()
    private let listener: TCPSocket
    private let accepted = LockedValue<[TCPSocket]>([])
    private let codec = ChatCodec(version: .v2)

    init(group: EventLoopGroup) throws {
        listener = TCPSocket(delegate: nil, delegateQueue: nil, group: group)
        listener.delegate = self
        try listener.accept(onInterface: "127.0.0.1", port: 0)
    }

    var address: ServerAddress { ServerAddress(host: "127.0.0.1", port: listener.localPort) }

    /// Writes `message` to the latest connection.
    func send(_ message: ChatMessage) throws {
        let frame = try codec.encode(message)
        accepted.withLock { $0.last }?.write(frame, withTimeout: -1, tag: 0)
    }

    /// Closes every connection, as a server that died would (the listener stays).
    func closeConnections() { for socket in accepted.withLock({ $0 }) { socket.disconnect() } }

    func stop() {
        closeConnections()
        listener.disconnect()
    }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        let number = accepted.withLock { sockets -> Int in
            sockets.append(newSocket)
            return sockets.count
        }
        let decoder = SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: codec.maxBodyLength, acceptedVersions: ChatCodec.versions)
        newSocket.readFrames(using: SocketFrameDecoder(decoder)) { [self] socket, frame in
            guard let message = try? codec.message(from: frame) else { return }
            messages.record(message)
            if case .v2(.login(let name, _, _, _, _, _)) = message,
                let answer = try? codec.encode(
                    .v2(.loginAccepted(name: name, online: [], onlineCount: 0, resumeToken: "T\(number)", stored: true)))
            {
                socket.write(answer, withTimeout: -1, tag: 0)
            }
        }
    }
}

/// What a ``ChatConnection`` told its run.
private final class RecordingHandler: ChatConnectionHandler, @unchecked Sendable {
    enum Event: Equatable, Sendable {
        case loggedIn
        case failed
        case event(ServerEvent)
    }
    let events = EventRecorder<Event>()
    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64) { events.record(.loggedIn) }
    func connection(_ connection: ChatConnection, didReceive event: ServerEvent, at now: UInt64) { events.record(.event(event)) }
    func connection(_ connection: ChatConnection, didFail reason: String) { events.record(.failed) }
}

/// A bench connection that keeps an outbox (`--failover`) resends, after its reconnect, exactly the
/// messages not answered with `stored`, in id order with their ids, after a login that carries the
/// same client instance, the last resume token and the positions given (docs/PROTOCOL.md "Sending").
@Suite struct ChatConnectionOutboxTests {
    @Test(TestTiming.timeLimit(minutes: 1))
    func aReconnectResendsWhatWasNotStoredInIdOrder() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "outbox-test")
        defer { group.shutdown() }
        let first = try RecordingChatServer(group: group), second = try RecordingChatServer(group: group)
        defer { first.stop(); second.stop() }
        let handler = RecordingHandler()
        let connection = ChatConnection(index: 0, name: "ann", loop: group.loops[0], group: group, handler: handler)
        connection.keepsOutbox = true

        try group.loops[0].runAndWait { Result { () throws(SocketError) in try connection.connect(to: first.address) } }.get()
        guard case .v2(.login("ann", RunTag.password, nil, let instance, [:], true)) = try await first.messages.next() else {
            Issue.record("no first login")
            return
        }
        #expect(try await handler.events.next() == .loggedIn)
        group.loops[0].runAndWait {
            for id: UInt64 in [7, 8, 9] { connection.sendDirect(id: id, to: "bob", text: "m\(id)") }
        }
        #expect(try await first.messages.next(3) == [7, 8, 9].map { .v2(.directMessage(id: $0, to: "bob", text: "m\($0)")) })
        try first.send(.v2(.stored(id: 8, conversation: "direct:ann bob", sequence: 1)))
        #expect(try await handler.events.next() == .event(.stored(id: 8, sequence: 1)))
        #expect(group.loops[0].runAndWait { connection.outbox.keys.sorted() } == [7, 9])

        first.closeConnections()
        #expect(try await handler.events.next() == .failed)
        try group.loops[0].runAndWait {
            Result { () throws(SocketError) in
                try connection.reconnect(to: second.address, from: nil, positions: ["direct:ann bob": 1], loginTimeout: .seconds(60))
            }
        }.get()
        let resumed = try await second.messages.next(3)
        #expect(
            resumed == [
                .v2(
                    .login(
                        name: "ann", password: RunTag.password, resumeToken: "T1", clientInstance: instance,
                        positions: ["direct:ann bob": 1], presenceChanges: true)),
                .v2(.directMessage(id: 7, to: "bob", text: "m7")),
                .v2(.directMessage(id: 9, to: "bob", text: "m9"))
            ])
        #expect(try await handler.events.next() == .loggedIn)
        #expect(group.loops[0].runAndWait { (connection.messagesResent, connection.outbox.count) } == (2, 2))
    }
}
