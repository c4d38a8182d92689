import AsyncSocket
import Foundation
import Testing
import TestSupport
@testable import SocketBench

/// `socket-bench server udp`'s echo: every datagram comes back to its sender byte for byte.
@Suite struct UDPEchoServerTests {
    @Test func echoesEveryDatagramExactlyToItsSender() async throws {
        let server = UDPEchoServer()
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }
        #expect(port != 0)

        let delegate = UDPRecordingDelegate()
        let client = UDPSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "udp-echo-client"))
        defer { client.close() }
        try client.bind(toPort: 0, interface: "127.0.0.1")
        try client.beginReceiving()
        let serverAddress = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port))
        // Loopback keeps order from one sender to one receiver; sizes from empty to the 1,400-byte bench size.
        let datagrams = [
            Data("ping".utf8), Data(), Data((0..<1400).map { UInt8(truncatingIfNeeded: $0 &* 7) }), Data(repeating: 0xA5, count: 64)
        ]
        for (tag, datagram) in datagrams.enumerated() {
            client.send(datagram, to: serverAddress, withTimeout: TestTiming.hangTimeout(5), tag: tag)
        }

        let received = try await delegate.events.next(datagrams.count, within: .seconds(10)) { event in
            if case .received = event { return true }
            return false
        }
        #expect(received == datagrams.map { UDPEvent.received($0, from: serverAddress, context: nil) })
        #expect(delegate.events.all.filter { if case .notSent = $0 { return true } else { return false } }.isEmpty)
    }

    @Test func parsesHostAndPort() throws {
        #expect(try UDPServerCommand.parse([]) == UDPServerCommand.Options(host: "127.0.0.1", port: 9200))
        #expect(try UDPServerCommand.parse(["--host", "::1", "--port", "0"]) == UDPServerCommand.Options(host: "::1", port: 0))
        #expect(throws: ArgumentError.self) { try UDPServerCommand.parse(["--loops", "2"]) }
    }
}
