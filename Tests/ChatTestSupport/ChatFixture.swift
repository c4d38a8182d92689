import AsyncSocket
import ChatClient
import ChatServer
import Foundation
import TestSupport

/// A chat server on a free loopback port, with its log recorded, and its clients, all on event loops of
/// their own. When the fixture goes, so do the loops: no client of a finished test keeps reconnecting
/// to a port that another test's listener may have been given meanwhile.
public final class ChatFixture: Sendable {
    public let log = EventRecorder<String>()
    public let server: ChatServer
    public let group: EventLoopGroup
    private let ownsGroup: Bool

    /// The default limits with login and frame deadlines of 10 minutes: a test of something else, on
    /// real time, must not be cut short by the 10 s deadlines when the machine is slow (the suite runs
    /// in parallel on two cores). Tests of the deadlines set them themselves.
    public static var testLimits: ChatServer.Limits {
        var limits = ChatServer.Limits()
        limits.loginTimeout = .seconds(600)
        limits.frameTimeout = .seconds(600)
        return limits
    }

    public init(
        idleTimeout: Duration = .seconds(360), group: EventLoopGroup? = nil, limits: ChatServer.Limits = ChatFixture.testLimits,
        store: any MessageStore = InMemoryMessageStore(), port: UInt16 = 0, tls: TLSConfiguration? = nil
    ) throws {
        let log = self.log
        self.group = group ?? EventLoopGroup(numberOfThreads: 1, name: "chat-fixture")
        ownsGroup = group == nil
        server = ChatServer(
            host: "127.0.0.1", port: port, idleTimeout: idleTimeout, store: store,
            passwordHasher: PasswordHasher(limits: .minimum), limits: limits, group: self.group,
            logger: .recording(into: log, level: .debug),
            tls: tls)
        try server.start()
    }

    /// A started client for `name`, its output recorded.
    public func client(_ name: String, heartbeat: Duration = .seconds(180)) -> (ChatClient, EventRecorder<String>) {
        let output = EventRecorder<String>()
        let client = ChatClient(
            name: name, host: "127.0.0.1", port: server.port, heartbeat: heartbeat, group: group,
            output: { output.record($0) }, onFinish: { output.record("finished \($0)") })
        client.start()
        return (client, output)
    }

    deinit {
        server.stop()
        if ownsGroup { group.shutdown() }
    }
}
