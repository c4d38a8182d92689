import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

/// CocoaAsyncSocket's UDP tests (Tests/Shared/ObjC/GCDAsyncUdpSocketConnectionTests.m and
/// Tests/Mac/GCDAsyncUdpSocketUNTests.m), ported. Upstream passes when either a datagram arrives or the
/// socket closes, and uses random ports and random sizes; here each test expects the exact callbacks
/// and bytes, on ports the kernel picks on 127.0.0.1, with fixed sizes that cover upstream's ranges.
@Suite struct UDPSocketPortedTests {
    /// The bytes upstream sends: "test-data-" 7,000 times (70,000 bytes), cut to length.
    static let testData = Data(String(repeating: "test-data-", count: 7000).utf8)

    /// A receiving server bound to 127.0.0.1 and an unbound client, as upstream's setUp makes them.
    final class Fixture: Sendable {
        let server = RecordedUDPSocket("server")
        let client = RecordedUDPSocket("client")
        let port: UInt16

        init() throws {
            try server.socket.bind(toPort: 0, interface: "127.0.0.1")
            try server.socket.beginReceiving()
            port = server.socket.localPort
        }

        /// Sends `length` bytes of the test data from the client and expects exactly them at the server.
        func roundTrip(length: Int, tag: Int) async throws {
            let data = UDPSocketPortedTests.testData.prefix(length)
            client.socket.send(Data(data), toHost: "127.0.0.1", port: port, withTimeout: TestTiming.hangTimeout(30), tag: tag)
            #expect(try await client.next() == .sent(tag: tag))
            let received = try await server.next()
            #expect(received.receivedData?.count == length)
            #expect(
                received
                    == .received(
                        Data(data), from: try #require(SocketAddress(ipAddress: "127.0.0.1", port: client.socket.localPortIPv4)),
                        context: nil))
        }
    }

    /// GCDAsyncUdpSocketUNTests.testConnectSendAndReceiveData.
    @Test func connectSendAndReceiveData() async throws {
        let fixture = try Fixture()
        try fixture.client.socket.connect(toHost: "127.0.0.1", onPort: fixture.port)
        #expect(try await fixture.client.next() == .connected(try #require(SocketAddress(ipAddress: "127.0.0.1", port: fixture.port))))
        #expect(fixture.client.socket.isConnected)
        #expect(fixture.client.socket.connectedHost == "127.0.0.1")
        #expect(fixture.client.socket.connectedPort == fixture.port)
        let testData = Data("Test string".utf8)
        fixture.client.socket.send(testData, withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await fixture.client.next() == .sent(tag: 0))
        let from = try #require(fixture.client.socket.localAddress)
        #expect(from.host == "127.0.0.1")
        #expect(try await fixture.server.next() == .received(testData, from: from, context: nil))
    }

    /// testSendBoardcastWithMicroPacket: upstream sends a random length below 9,217 bytes.
    @Test(arguments: [1, 512, 1472, 9216])
    func sendMicroPacket(length: Int) async throws {
        try await Fixture().roundTrip(length: length, tag: length)
    }

    /// testSendBoardcastWithLargePacket: upstream sends 9,217 to 65,535 bytes, of which those over 65,507
    /// cannot be IPv4 datagrams (sendInvalidIPv4Packet covers them); every size up to that one arrives whole.
    @Test(arguments: [9217, 32768, 65507])
    func sendLargePacket(length: Int) async throws {
        try await Fixture().roundTrip(length: length, tag: 1)
    }

    /// testSendBoardcastWithInvaildPacket: 65,536 bytes and more are over the maximum send size
    /// (65,535 by default); the send fails alone and the socket sends the next datagram.
    @Test(arguments: [65536, 70000])
    func sendInvalidPacket(length: Int) async throws {
        let fixture = try Fixture()
        fixture.client.socket.send(
            Data(Self.testData.prefix(length)), toHost: "127.0.0.1", port: fixture.port, withTimeout: TestTiming.hangTimeout(30), tag: 3)
        #expect(try await fixture.client.next() == .notSent(tag: 3, .datagramTooLarge(size: length, maxSendSize: 65535)))
        try await fixture.roundTrip(length: 100, tag: 4)
    }

    /// A datagram over IPv4's 65,507 bytes but within the maximum send size reaches the kernel, which
    /// refuses it (`EMSGSIZE`); the socket stays usable.
    @Test func sendInvalidIPv4Packet() async throws {
        let fixture = try Fixture()
        fixture.client.socket.send(
            Data(Self.testData.prefix(65508)), toHost: "127.0.0.1", port: fixture.port, withTimeout: TestTiming.hangTimeout(30), tag: 5)
        #expect(try await fixture.client.next() == .notSent(tag: 5, .messageTooLarge(operation: "sendmmsg", errno: EMSGSIZE)))
        #expect(!fixture.client.socket.isClosed)
        try await fixture.roundTrip(length: 65507, tag: 6)
    }

    /// testAlterMaxSendBufferSizeWithVaildValue.
    @Test func alterMaxSendBufferSizeWithValidValue() async throws {
        let fixture = try Fixture()
        fixture.client.socket.maxSendBufferSize = 4321
        #expect(fixture.client.socket.maxSendBufferSize == 4321)
        try await fixture.roundTrip(length: 4321, tag: 7)
    }

    /// testAlterMaxSendBufferSizeWithInvaildValue.
    @Test func alterMaxSendBufferSizeWithInvalidValue() async throws {
        let fixture = try Fixture()
        fixture.client.socket.maxSendBufferSize = 4321
        fixture.client.socket.send(
            Data(Self.testData.prefix(4322)), toHost: "127.0.0.1", port: fixture.port, withTimeout: TestTiming.hangTimeout(30), tag: 8)
        #expect(try await fixture.client.next() == .notSent(tag: 8, .datagramTooLarge(size: 4322, maxSendSize: 4321)))
        fixture.server.settle()
        #expect(fixture.server.pending == [])
    }
}
