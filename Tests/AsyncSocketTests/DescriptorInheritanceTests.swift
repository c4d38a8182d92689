import AsyncSocket
import Foundation
import Testing
import TestSupport

/// No descriptor of the library reaches a child process: every socket, accepted connection, epoll
/// and eventfd descriptor is made close-on-exec atomically (`SOCK_CLOEXEC`, `accept4`,
/// `EPOLL_CLOEXEC`, `EFD_CLOEXEC`). A child that inherits a test's socket keeps the connection open
/// after the test closed it (its peer never sees the end) and holds its port: the tests that start
/// redis, nginx, nats-server or Python beside the others depend on it.
@Suite struct DescriptorInheritanceTests {
    @Test func aChildProcessInheritsNoneOfTheLibrarysDescriptors() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "inheritance")
        defer { group.shutdown() }
        let pair = try LoopbackPair(group: group)
        defer { pair.close() }
        let accepted = try await pair.connect()
        let udp = UDPSocket(delegate: nil, delegateQueue: nil, group: group)
        defer { udp.close() }
        try udp.bind(toPort: 0, interface: "127.0.0.1")
        var ours: [String] = []
        for socket in [pair.server, pair.client, accepted] {
            ours.append(try await Self.target { done in socket.perform { done($0) } })
        }
        let udpFD = udp.perform { $0.socketFD }
        ours.append(try Self.target(of: udpFD))
        #expect(ours.allSatisfy { $0.hasPrefix("socket:[") }, "\(ours)")

        let inherited = try await ChildProcess.inheritedDescriptors()
        #expect(inherited.filter { line in ours.contains { line.hasSuffix(" -> \($0)") } } == [], "ours: \(ours)")
        // No epoll, eventfd or timerfd of any loop of the process either (the sockets `swift test`
        // itself hands the test process are inherited by design, so only the library's are checked).
        #expect(inherited.filter { $0.contains("anon_inode:") } == [], "inherited: \(inherited)")
    }

    /// What descriptor `fd` of this process is (`socket:[INODE]`).
    static func target(of fd: Int32) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
    }

    /// The target of the descriptor a socket's `perform` hands over.
    static func target(_ perform: (@escaping @Sendable (Int32) -> Void) -> Void) async throws -> String {
        let fd = await withCheckedContinuation { continuation in perform { continuation.resume(returning: $0) } }
        return try target(of: fd)
    }
}
