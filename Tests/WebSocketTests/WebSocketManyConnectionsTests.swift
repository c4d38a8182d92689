import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Many connections opening and closing at once against one listener: every one echoed and ended as
/// asked, and afterwards no descriptor of this process is a TCP socket on the listener's port but the
/// listener's own.
@Suite(.cpuBound(minutes: 3)) struct WebSocketManyConnectionsTests {
    /// The inodes of this process's open sockets.
    static func openSocketInodes() -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            fds.compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
    }

    /// This process's TCP sockets with `port` at either end, other than listening ones, as
    /// "local remote state" lines of /proc/net/tcp (state in hex: 01 established, 08 close-wait, …).
    static func socketsOnPort(_ port: UInt16) -> [String] {
        let mine = openSocketInodes()
        let hexPort = String(format: ":%04X", port)
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] != "0A", mine.contains(String(fields[9])),
                fields[1].hasSuffix(hexPort) || fields[2].hasSuffix(hexPort)
            else { return nil }
            return "\(fields[1]) \(fields[2]) \(fields[3])"
        }
    }

    /// 500 async clients at once: each sends its number and gets it back; even ones close (1000), odd
    /// ones ask the server to (1001). Every end is reported on both sides, and no socket is left.
    @Test func fiveHundredConnectionsOpenAndCloseAtOnceAndLeaveNoDescriptor() async throws {
        // Loops of their own: 1,000 sockets on the shared ones would hold up other tests' events.
        let loops = EventLoopGroup(numberOfThreads: 2, name: "five-hundred")
        defer { loops.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start(group: loops)
        defer { listener.stop() }
        let count = 200
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                group.addTask {
                    let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/\(index)", group: loops)
                    try await connection.send(.text("\(index)"))
                    var iterator = connection.messages.makeAsyncIterator()
                    guard case .text("\(index)") = await iterator.next() else { return "\(index): no echo" }
                    if index.isMultiple(of: 2) { return "\(await connection.close())" }
                    try await connection.send(.text("close me"))
                    while await iterator.next() != nil {}
                    return "\(await connection.closeResult)"
                }
            }
            var results: [String: Int] = [:]
            for try await result in group { results[result, default: 0] += 1 }
            return results
        }
        #expect(results == ["1000 (clean)": count / 2, "1001 \"asked\" (clean)": count / 2])
        var serverResults: [String: Int] = [:]
        for _ in 0..<count { serverResults[try await server.closes.next(within: TestTiming.hangLimit(.seconds(30))), default: 0] += 1 }
        #expect(serverResults == ["1000 (clean)": count / 2, "1001 (clean)": count / 2])
        #expect(server.openCount == 0)
        // Both ends have reported; their descriptors are closed right after (the server's once its
        // Close is written, a client's when the server's TCP close arrives): a bounded wait for them.
        var left = Self.socketsOnPort(listener.port)
        for _ in 0..<200 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            left = Self.socketsOnPort(listener.port)
        }
        #expect(left == [], "\(left.count) sockets left")
    }

    /// 200 clients that drop TCP without a Close: half right after the upgrade, half inside a frame
    /// (its header and 3 of its 10 payload bytes sent). Each ends with 1006 on the server, and no
    /// socket is left.
    @Test func twoHundredClientsThatDropTCPWithoutACloseLeaveNoDescriptor() async throws {
        let loops = EventLoopGroup(numberOfThreads: 2, name: "two-hundred-drops")
        defer { loops.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start(group: loops) { $0.connection = WebSocketProtocolHandler(role: .server, keepAlive: nil) }
        defer { listener.stop() }
        let count = 200
        var peers: [RawWebSocketPeer] = []
        for _ in 0..<count { peers.append(try await RawWebSocketPeer(port: listener.port, group: loops)) }
        for (index, peer) in peers.enumerated() {
            if index.isMultiple(of: 2) { peer.write(Array(RawWebSocketPeer.frame(0x82, Array(0..<10)).prefix(9))) }
            peer.close()
        }
        var results: [String: Int] = [:]
        for _ in 0..<count { results[try await server.closes.next(within: TestTiming.hangLimit(.seconds(30))), default: 0] += 1 }
        #expect(results == ["1006 (not clean): socket closed by remote peer": count])
        var left = Self.socketsOnPort(listener.port)
        for _ in 0..<200 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            left = Self.socketsOnPort(listener.port)
        }
        #expect(left == [], "\(left.count) sockets left")
    }
}
