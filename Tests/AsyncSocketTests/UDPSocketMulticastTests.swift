import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

/// Multicast, broadcast and port sharing, kept on this machine: IPv4 multicast joins 239.255.x.y on
/// interface 127.0.0.1 and is sent from 127.0.0.1 with loop on and TTL 0; broadcast goes to
/// 127.255.255.255 only (never the limited broadcast address, all ones, which would leave through eth0). IPv6 multicast is not
/// deliverable on loopback here (`sendto` fails with `ENETUNREACH`), so IPv6 join and leave are tested
/// at the call level only.
@Suite struct UDPSocketMulticastTests {
    /// A group in the IPv4 organisation-local scope (RFC 2365), different for every call.
    static func group() -> String {
        var generator = SystemRandomNumberGenerator()
        return "239.255.\(Int.random(in: 1...254, using: &generator)).\(Int.random(in: 1...254, using: &generator))"
    }

    @Test func ipv4MulticastOnLoopbackIsDeliveredToAMember() async throws {
        let group = Self.group()
        let member = RecordedUDPSocket("member")
        member.socket.isIPv6Enabled = false
        try member.socket.bind(toPort: 0)
        try member.socket.joinMulticastGroup(group, onInterface: "127.0.0.1")
        try member.socket.beginReceiving()
        let sender = RecordedUDPSocket("sender")
        sender.socket.isIPv6Enabled = false
        try sender.socket.sendIPv4Multicast(onInterface: "127.0.0.1")
        try sender.socket.enableMulticastLoop(true)
        try sender.socket.setMulticastTTL(0)
        sender.socket.send(
            Data("to the group".utf8), toHost: group, port: member.socket.localPort, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await sender.next() == .sent(tag: 1))
        let from = try #require(SocketAddress(ipAddress: "127.0.0.1", port: sender.socket.localPortIPv4))
        #expect(try await member.next() == .received(Data("to the group".utf8), from: from, context: nil))
        // The options reached the descriptor.
        let (ttl, loop) = sender.socket.perform { descriptors -> (Int32, Int32) in
            var ttl: Int32 = -1, loop: Int32 = -1
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptors.socket4FD, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, &length)
            length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptors.socket4FD, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, &loop, &length)
            return (ttl & 0xFF, loop & 0xFF)
        }
        #expect(ttl == 0 && loop == 1)
        try member.socket.leaveMulticastGroup(group, onInterface: "127.0.0.1")
        #expect(throws: SocketError.addressNotAvailable(operation: "setsockopt", errno: EADDRNOTAVAIL)) {
            try member.socket.leaveMulticastGroup(group, onInterface: "127.0.0.1")
        }
    }

    @Test func joiningNeedsABoundSocketAndANumericGroup() throws {
        let socket = RecordedUDPSocket()
        #expect(throws: SocketError.badConfig("Must bind a socket before joining a multicast group.")) {
            try socket.socket.joinMulticastGroup(Self.group(), onInterface: "127.0.0.1")
        }
        try socket.socket.bind(toPort: 0, interface: "127.0.0.1")
        #expect(throws: SocketError.badParam("not a numeric multicast group address: group.example")) {
            try socket.socket.joinMulticastGroup("group.example", onInterface: "127.0.0.1")
        }
        #expect(throws: SocketError.badConfig("the socket has no IPv6 descriptor for group ff02::1:3")) {
            try socket.socket.joinMulticastGroup("ff02::1:3", onInterface: "lo")
        }
    }

    /// IPv6 join and leave at the call level: a membership on "lo" is made and dropped (leaving twice
    /// fails), but nothing is sent: IPv6 multicast is not deliverable on loopback on these machines.
    @Test func ipv6JoinAndLeaveOnLoopbackAtTheCallLevel() throws {
        let socket = RecordedUDPSocket()
        socket.socket.isIPv4Enabled = false
        try socket.socket.bind(toPort: 0, interface: "::1")
        try socket.socket.setMulticastHopLimit(0)
        try socket.socket.sendIPv6Multicast(onInterface: "lo")
        try socket.socket.joinMulticastGroup("ff02::1:3", onInterface: "lo")
        try socket.socket.leaveMulticastGroup("ff02::1:3", onInterface: "lo")
        #expect(throws: SocketError.addressNotAvailable(operation: "setsockopt", errno: EADDRNOTAVAIL)) {
            try socket.socket.leaveMulticastGroup("ff02::1:3", onInterface: "lo")
        }
        #expect(throws: SocketError.badParam("a hop limit is 0...255, not 256")) { try socket.socket.setMulticastHopLimit(256) }
    }

    /// Broadcast to 127.255.255.255 only: refused (`EACCES`) until enabled, then delivered.
    @Test func broadcastOnLoopbackNeedsEnablingFirst() async throws {
        let listener = RecordedUDPSocket("listener")
        listener.socket.isIPv6Enabled = false
        try listener.socket.bind(toPort: 0)
        try listener.socket.beginReceiving()
        let sender = RecordedUDPSocket("sender")
        sender.socket.isIPv6Enabled = false
        let port = listener.socket.localPort
        sender.socket.send(Data("all of you".utf8), toHost: "127.255.255.255", port: port, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await sender.next() == .notSent(tag: 1, .posix(operation: "sendmmsg", errno: EACCES)))
        try sender.socket.enableBroadcast(true)
        sender.socket.send(Data("all of you".utf8), toHost: "127.255.255.255", port: port, withTimeout: TestTiming.hangTimeout(5), tag: 2)
        #expect(try await sender.next() == .sent(tag: 2))
        let from = try #require(SocketAddress(ipAddress: "127.0.0.1", port: sender.socket.localPortIPv4))
        #expect(try await listener.next() == .received(Data("all of you".utf8), from: from, context: nil))
    }

    /// Two sockets with SO_REUSEPORT bind one port; without it the second bind fails. The two record
    /// into one recorder, from their delegate queue: a datagram reaches one of them. (Before, a `Task`
    /// per socket on the cooperative pool recorded its arrival, and in a busy suite that came after
    /// the test's 10 s wait: docs/TESTING.md, "Flaky tests found".)
    @Test func reusePortLetsTwoSocketsBindOnePort() async throws {
        let arrivals = UDPRecordingDelegate()
        let first = RecordedUDPSocket("first", delegate: arrivals)
        let second = RecordedUDPSocket("second", delegate: arrivals)
        try first.socket.enableReusePort(true)
        try second.socket.enableReusePort(true)
        try first.socket.bind(toPort: 0, interface: "127.0.0.1")
        let port = first.socket.localPort
        try second.socket.bind(toPort: port, interface: "127.0.0.1")
        #expect(second.socket.localPort == port)
        let third = RecordedUDPSocket("third")
        #expect(throws: SocketError.addressInUse(operation: "bind", errno: EADDRINUSE)) {
            try third.socket.bind(toPort: port, interface: "127.0.0.1")
        }
        try first.socket.beginReceiving()
        try second.socket.beginReceiving()
        let sender = RecordedUDPSocket("sender")
        sender.socket.send(Data("either".utf8), toHost: "127.0.0.1", port: port, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await sender.next() == .sent(tag: 1))
        let from = try #require(SocketAddress(ipAddress: "127.0.0.1", port: sender.socket.localPortIPv4))
        #expect(try await arrivals.events.next() == .received(Data("either".utf8), from: from, context: nil))
        first.socket.close()
        second.socket.close()
        #expect(try await arrivals.events.next(2) == [.closed(nil), .closed(nil)])
    }
}
