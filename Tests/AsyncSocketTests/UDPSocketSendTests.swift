import AsyncSocket
import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

/// Sending and connecting on a ``UDPSocket``: timeouts in virtual time, failures that fail one send
/// and leave the socket open, connect restrictions, what close and closeAfterSending report.
@Suite struct UDPSocketSendTests {
    /// A receiver bound to 127.0.0.1 and receiving.
    static func receiver(_ name: String = "receiver") throws -> RecordedUDPSocket {
        let receiver = RecordedUDPSocket(name)
        try receiver.socket.bind(toPort: 0, interface: "127.0.0.1")
        try receiver.socket.beginReceiving()
        return receiver
    }

    /// A send filter that holds every datagram until ``release()``: the send waits at the head of the
    /// queue, as long as the test wants, with no timing involved.
    final class HeldFilter: Sendable {
        let queue = DispatchQueue(label: "held filter")
        let asked = EventRecorder<Int>()
        private let gate = DispatchSemaphore(value: 0)

        var filter: UDPSocket.SendFilter {
            { [self] _, _, tag in
                asked.record(tag)
                gate.wait()
                return true
            }
        }

        func release(_ count: Int = 1) { for _ in 0..<count { gate.signal() } }
    }

    /// The send timeout runs from when the send reaches the head of the queue, in virtual time: 999 ms
    /// after, nothing; 1 ms more, that send alone fails, and the next one goes out.
    @Test func aSendTimesOutInVirtualTimeAndOnlyThatSendFails() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "udp-timeout")
        defer { group.shutdown() }
        let receiver = try Self.receiver()
        let sender = RecordedUDPSocket("sender", group: group)
        let held = HeldFilter()
        sender.socket.setSendFilter(held.filter, withQueue: held.queue)
        let destination = try #require(receiver.socket.localAddress)
        sender.socket.send(Data("late".utf8), to: destination, withTimeout: 1, tag: 7)
        #expect(try await held.asked.next() == 7)
        await clock.advance(by: .milliseconds(999))
        sender.settle()
        #expect(sender.pending == [])
        await clock.advance(by: .milliseconds(1))
        #expect(try await sender.next() == .notSent(tag: 7, .sendTimeout(tag: 7)))
        held.release()  // the late verdict is ignored
        sender.socket.setSendFilter(nil, withQueue: nil)
        sender.socket.send(Data("next".utf8), to: destination, withTimeout: 1, tag: 8)
        #expect(try await sender.next() == .sent(tag: 8))
        let from = try #require(SocketAddress(ipAddress: "127.0.0.1", port: sender.socket.localPortIPv4))
        #expect(try await receiver.next() == .received(Data("next".utf8), from: from, context: nil))
        sender.socket.close()
        #expect(try await sender.next() == .closed(nil))
    }

    /// Sends still queued at close are each reported as not sent, in order, before the close.
    @Test func sendsPendingAtCloseAreReportedNotSent() async throws {
        let receiver = try Self.receiver()
        let sender = RecordedUDPSocket("sender")
        let held = HeldFilter()
        sender.socket.setSendFilter(held.filter, withQueue: held.queue)
        let destination = try #require(receiver.socket.localAddress)
        for tag in 1...3 { sender.socket.send(Data("held".utf8), to: destination, withTimeout: -1, tag: tag) }
        #expect(try await held.asked.next() == 1)
        sender.socket.close()
        #expect(
            try await sender.delegate.events.next(4) == [
                .notSent(tag: 1, .connectionClosed), .notSent(tag: 2, .connectionClosed), .notSent(tag: 3, .connectionClosed), .closed(nil)
            ])
        held.release()
        #expect(sender.socket.isClosed)
        receiver.settle()
        #expect(receiver.pending == [])
    }

    /// A send filter that refuses a datagram fails that send (GCDAsyncUdpSocket reports it as sent).
    @Test func aFilteredSendIsNotReportedAsSent() async throws {
        let receiver = try Self.receiver()
        let sender = RecordedUDPSocket("sender")
        sender.socket.setSendFilter({ data, _, _ in data != Data("drop".utf8) }, withQueue: nil)
        let destination = try #require(receiver.socket.localAddress)
        sender.socket.send(Data("drop".utf8), to: destination, withTimeout: -1, tag: 1)
        sender.socket.send(Data("keep".utf8), to: destination, withTimeout: -1, tag: 2)
        #expect(try await sender.delegate.events.next(2) == [.notSent(tag: 1, .sendFiltered(tag: 1)), .sent(tag: 2)])
        #expect(try await receiver.next().receivedData == Data("keep".utf8))
    }

    @Test func closeAfterSendingSendsEverythingQueuedThenCloses() async throws {
        let receiver = try Self.receiver()
        let sender = RecordedUDPSocket("sender")
        let destination = try #require(receiver.socket.localAddress)
        for tag in 1...3 { sender.socket.send(Data("last \(tag)".utf8), to: destination, withTimeout: -1, tag: tag) }
        sender.socket.closeAfterSending()
        #expect(try await sender.delegate.events.next(4) == [.sent(tag: 1), .sent(tag: 2), .sent(tag: 3), .closed(nil)])
        for tag in 1...3 { #expect(try await receiver.next().receivedData == Data("last \(tag)".utf8)) }
        #expect(sender.socket.isClosed)
    }

    /// Regression: closeAfterSending() took effect when called, not in loop order, so a send asked for
    /// just before it whose loop task had not run yet found the socket closed by the flush of an earlier
    /// send (`closeAfterSendingSendsEverythingQueuedThenCloses` failed 2 times in 15). Forced here: the
    /// loop is held while the earlier send's verdict, the later send and the call queue up behind it.
    @Test func aSendAskedForJustBeforeCloseAfterSendingIsSentFirst() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "udp-close-order")
        defer { group.shutdown() }
        let receiver = try Self.receiver()
        let sender = RecordedUDPSocket("sender", group: group)
        let held = HeldFilter()
        sender.socket.setSendFilter(held.filter, withQueue: held.queue)
        let destination = try #require(receiver.socket.localAddress)
        sender.socket.send(Data("first".utf8), to: destination, withTimeout: -1, tag: 1)
        #expect(try await held.asked.next() == 1)
        let loopHeld = DispatchSemaphore(value: 0)
        let loopWaiting = DispatchSemaphore(value: 0)
        sender.socket.eventLoop.execute {
            loopWaiting.signal()
            loopHeld.wait()
        }
        loopWaiting.wait()
        held.release(2)
        held.queue.sync {}  // the verdict on the first send is queued on the held loop now
        sender.socket.send(Data("second".utf8), to: destination, withTimeout: -1, tag: 2)
        sender.socket.closeAfterSending()
        loopHeld.signal()
        #expect(try await sender.delegate.events.next(3) == [.sent(tag: 1), .sent(tag: 2), .closed(nil)])
        #expect(try await receiver.next().receivedData == Data("first".utf8))
        #expect(try await receiver.next().receivedData == Data("second".utf8))
        #expect(sender.socket.isClosed)
    }

    @Test func aSendAfterCloseAfterSendingFails() async throws {
        let sender = RecordedUDPSocket("sender")
        try sender.socket.bind(toPort: 0, interface: "127.0.0.1")
        let held = HeldFilter()
        sender.socket.setSendFilter(held.filter, withQueue: held.queue)
        let destination = try #require(sender.socket.localAddress)
        sender.socket.send(Data("first".utf8), to: destination, withTimeout: -1, tag: 1)
        #expect(try await held.asked.next() == 1)
        sender.socket.closeAfterSending()
        sender.socket.send(Data("second".utf8), to: destination, withTimeout: -1, tag: 2)
        #expect(try await sender.next() == .notSent(tag: 2, .disconnecting))
        held.release()
        #expect(try await sender.delegate.events.next(2) == [.sent(tag: 1), .closed(nil)])
    }

    @Test func aSendWithoutAnAddressNeedsAConnection() async throws {
        let sender = RecordedUDPSocket("sender")
        sender.socket.send(Data("x".utf8), withTimeout: -1, tag: 4)
        #expect(try await sender.next() == .notSent(tag: 4, .notConnected))
    }

    /// A connected socket sends only to its peer, receives only from it, and refuses to connect twice.
    @Test func aConnectedSocketTalksOnlyToItsPeer() async throws {
        let peer = try Self.receiver("peer")
        let stranger = RecordedUDPSocket("stranger")
        let client = RecordedUDPSocket("client")
        try client.socket.bind(toPort: 0, interface: "127.0.0.1")
        let peerAddress = try #require(peer.socket.localAddress)
        try client.socket.connect(to: peerAddress)
        #expect(try await client.next() == .connected(peerAddress))
        #expect(throws: SocketError.badConfig("Cannot connect a socket more than once.")) { try client.socket.connect(to: peerAddress) }
        #expect(throws: SocketError.badConfig("Cannot bind a socket more than once.")) { try client.socket.bind(toPort: 0) }
        try client.socket.beginReceiving()
        client.socket.send(Data("elsewhere".utf8), to: peerAddress, withTimeout: -1, tag: 1)
        #expect(try await client.next() == .notSent(tag: 1, .badConfig("Cannot send data to a specific address on a connected socket.")))
        let clientAddress = try #require(client.socket.localAddress)
        stranger.socket.send(Data("from a stranger".utf8), to: clientAddress, withTimeout: -1, tag: 2)
        #expect(try await stranger.next() == .sent(tag: 2))
        peer.socket.send(Data("from the peer".utf8), to: clientAddress, withTimeout: -1, tag: 3)
        #expect(try await peer.next() == .sent(tag: 3))
        #expect(try await client.next() == .received(Data("from the peer".utf8), from: peerAddress, context: nil))
        client.socket.send(Data("to the peer".utf8), withTimeout: -1, tag: 4)
        #expect(try await client.next() == .sent(tag: 4))
        #expect(try await peer.next() == .received(Data("to the peer".utf8), from: clientAddress, context: nil))
        client.settle()
        #expect(client.pending == [])
    }

    /// A connect that fails leaves the socket usable: it connects afterwards.
    @Test func aFailedConnectLeavesTheSocketUsable() async throws {
        let peer = try Self.receiver("peer")
        let client = RecordedUDPSocket("client")
        client.socket.isIPv6Enabled = false
        try client.socket.connect(toHost: "::1", onPort: 9)
        #expect(try await client.next() == .notConnected(.badConfig("cannot connect to [::1]:9: its family is disabled or not IP")))
        #expect(!client.socket.isConnected)
        try client.socket.connect(toHost: "127.0.0.1", onPort: peer.socket.localPort)
        let peerAddress = try #require(peer.socket.localAddress)
        #expect(try await client.next() == .connected(peerAddress))
        client.socket.send(Data("after all".utf8), withTimeout: -1, tag: 1)
        #expect(try await client.next() == .sent(tag: 1))
        #expect(try await peer.next().receivedData == Data("after all".utf8))
    }

    /// Sends queued before a connect go out unconnected; those after it wait for it.
    @Test func aConnectRunsThroughTheSendQueue() async throws {
        let first = try Self.receiver("first")
        let second = try Self.receiver("second")
        let client = RecordedUDPSocket("client")
        let firstAddress = try #require(first.socket.localAddress)
        let secondAddress = try #require(second.socket.localAddress)
        client.socket.send(Data("before".utf8), to: firstAddress, withTimeout: -1, tag: 1)
        try client.socket.connect(to: secondAddress)
        client.socket.send(Data("after".utf8), withTimeout: -1, tag: 2)
        #expect(try await client.delegate.events.next(3) == [.sent(tag: 1), .connected(secondAddress), .sent(tag: 2)])
        #expect(try await first.next().receivedData == Data("before".utf8))
        #expect(try await second.next().receivedData == Data("after".utf8))
    }

    /// A port that refuses datagrams: a UDP socket bound to it but connected elsewhere, so the kernel
    /// answers datagrams from anyone else with an ICMP port unreachable, and nobody else can take the port.
    final class RefusingPort {
        let fd: Int32
        let port: UInt16

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            _ = withLoopbackAddress(port: 0) { bind(descriptor, $0, $1) }
            _ = withLoopbackAddress(port: 9) { connect(descriptor, $0, $1) }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            fd = descriptor
            port = UInt16(bigEndian: address.sin_port)
            try #require(port != 0)
        }

        deinit { close(fd) }
    }

    /// The ICMP port unreachable for a datagram of a connected socket fails a later send (the kernel
    /// reports it there) with `ECONNREFUSED`; that send alone fails, the socket stays open, and the next
    /// send goes out. GCDAsyncUdpSocket closes the socket.
    @Test func aRefusedPortFailsOneSendAndTheSocketStaysOpen() async throws {
        let refusing = try RefusingPort()
        let client = RecordedUDPSocket("client")
        try client.socket.connect(toHost: "127.0.0.1", onPort: refusing.port)
        #expect(try await client.next() == .connected(try #require(SocketAddress(ipAddress: "127.0.0.1", port: refusing.port))))
        var refusedTag: Int?
        for tag in 1...20 where refusedTag == nil {
            client.socket.send(Data("knock".utf8), withTimeout: TestTiming.hangTimeout(5), tag: tag)
            let event = try await client.next()
            if event == .notSent(tag: tag, .connectionRefused(operation: "sendmmsg", errno: ECONNREFUSED)) {
                refusedTag = tag
            } else {
                #expect(event == .sent(tag: tag))
            }
        }
        #expect(refusedTag == 2)  // the first datagram's ICMP answer fails the second send
        #expect(!client.socket.isClosed && client.socket.isConnected)
        client.socket.send(Data("again".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 100)
        #expect(try await client.next() == .sent(tag: 100))
    }

    /// While receiving, the ICMP error reaches the receive side instead: reported, not fatal.
    @Test func aRefusedPortIsReportedToAReceivingSocket() async throws {
        let refusing = try RefusingPort()
        let client = RecordedUDPSocket("client")
        try client.socket.connect(toHost: "127.0.0.1", onPort: refusing.port)
        _ = try await client.next()
        try client.socket.beginReceiving()
        client.socket.send(Data("knock".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(
            try await client.delegate.events.next(2) == [
                .sent(tag: 1), .notReceived(from: nil, .connectionRefused(operation: "recvmmsg", errno: ECONNREFUSED))
            ])
        #expect(!client.socket.isClosed)
        client.socket.send(Data("again".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 2)
        #expect(try await client.next() == .sent(tag: 2))
    }

    /// A host name resolves off the loop ("localhost", from /etc/hosts); with IPv6 preferred the send
    /// goes to ::1 when the name has an IPv6 address, else to its IPv4 one. The receiver binds to
    /// "localhost": one descriptor per family, on one port.
    @Test func aSendToAHostNameUsesThePreferredFamily() async throws {
        let receiver = RecordedUDPSocket("receiver")
        try receiver.socket.bind(toPort: 0, interface: "localhost")
        #expect(receiver.socket.localHostIPv4 == "127.0.0.1" && receiver.socket.localHostIPv6 == "::1")
        #expect(receiver.socket.localPortIPv4 == receiver.socket.localPortIPv6)
        try receiver.socket.beginReceiving()
        let sender = RecordedUDPSocket("sender")
        sender.socket.setPreferIPv6()
        #expect(sender.socket.isIPv6Preferred && !sender.socket.isIPv4Preferred && !sender.socket.isIPVersionNeutral)
        sender.socket.send(
            Data("by name".utf8), toHost: "localhost", port: receiver.socket.localPort, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await sender.next() == .sent(tag: 1))
        let hasIPv6 = try Resolver.resolve(host: "localhost", port: 0).contains { $0.isIPv6 }
        let from =
            hasIPv6
            ? SocketAddress(ipAddress: "::1", port: sender.socket.localPortIPv6)
            : SocketAddress(ipAddress: "127.0.0.1", port: sender.socket.localPortIPv4)
        #expect(try await receiver.next() == .received(Data("by name".utf8), from: try #require(from), context: nil))
    }
}
