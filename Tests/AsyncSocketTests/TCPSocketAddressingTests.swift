@testable import AsyncSocket
import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

@Suite struct TCPSocketAddressingTests {
    @Test func portZeroGivesOnePortSharedByTheIPv4AndIPv6Listeners() async throws {
        let delegate = RecordingDelegate()
        let server = TCPSocket(delegate: delegate, delegateQueue: nil)
        try server.accept(onPort: 0)
        defer { server.disconnect() }
        let port = server.localPort
        var hosts: [String] = []
        for host in ["127.0.0.1", "::1"] {
            let clientDelegate = RecordingDelegate()
            let client = TCPSocket(delegate: clientDelegate, delegateQueue: nil)
            try client.connect(toHost: host, onPort: port, withTimeout: TestTiming.hangTimeout(5))
            #expect(try await clientDelegate.events.next().description == "connected(\(host):\(port))")
            let event = try await delegate.events.first { if case .accepted = $0 { true } else { false } }
            guard case .accepted(let accepted) = event else { Issue.record("no accept"); return }
            // Accepted over the listener of the client's own family, not as an IPv4-mapped IPv6 address.
            hosts.append(accepted.connectedHost ?? "?")
            accepted.disconnect()
            client.disconnect()
        }
        #expect(hosts == ["127.0.0.1", "::1"])
    }

    @Test func acceptOnAnInterfaceNameListensOnEachOfItsAddresses() async throws {
        let delegate = RecordingDelegate()
        let server = TCPSocket(delegate: delegate, delegateQueue: nil)
        try server.accept(onInterface: "lo", port: 0)
        defer { server.disconnect() }
        let port = server.localPort
        #expect(
            InterfaceAddresses.addresses(ofInterfaceNamed: "lo", port: port).map(\.description).sorted() == [
                "127.0.0.1:\(port)", "[::1]:\(port)"
            ])
        for host in ["127.0.0.1", "::1"] {
            let clientDelegate = RecordingDelegate()
            let client = TCPSocket(delegate: clientDelegate, delegateQueue: nil)
            try client.connect(toHost: host, onPort: port, withTimeout: TestTiming.hangTimeout(5))
            #expect(try await clientDelegate.events.next().description == "connected(\(host):\(port))")
            client.disconnect()
        }
        #expect(throws: SocketError.badParam("unknown interface no-such-interface0")) {
            try TCPSocket(delegate: delegate, delegateQueue: nil).accept(onInterface: "no-such-interface0", port: 0)
        }
    }

    @Test func interfaceDescriptionsWithPorts() {
        #expect(InterfaceAddresses.split("en1:8082") == ("en1", 8082))
        #expect(InterfaceAddresses.split("192.168.4.34:8082") == ("192.168.4.34", 8082))
        #expect(InterfaceAddresses.split("[::1]:8082") == ("::1", 8082))
        #expect(InterfaceAddresses.split("::1") == ("::1", nil))
        #expect(InterfaceAddresses.split("lo") == ("lo", nil))
    }

    @Test func connectViaAnInterfaceBindsItsAddressAndPort() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let localPort = unusedLoopbackPort()
        try pair.client.connect(
            toHost: "127.0.0.1", onPort: pair.port, viaInterface: "127.0.0.1:\(localPort)", withTimeout: TestTiming.hangTimeout(5))
        #expect(try await pair.clientDelegate.events.next().description == "connected(127.0.0.1:\(pair.port))")
        #expect(pair.client.localPort == localPort)
        guard case .accepted(let accepted) = try await pair.serverDelegate.events.next() else { Issue.record("no accept"); return }
        #expect(accepted.connectedPort == localPort)
        // An interface without an address of the target's family cannot be used.
        let delegate = RecordingDelegate()
        let other = TCPSocket(delegate: delegate, delegateQueue: nil)
        try other.connect(toHost: "::1", onPort: pair.port, viaInterface: "127.0.0.1", withTimeout: TestTiming.hangTimeout(5))
        #expect(
            try await delegate.events.next()
                == .disconnected(.badParam("the interface has no IPv6 address for [::1]:\(pair.port)")))
    }

    /// Regression: a reconnect to a stopped test server on an ephemeral port was, about 1 run in 30,
    /// "connected" — the kernel gave the client that very port as its own, and TCP's simultaneous open
    /// connected the socket to itself. Binding the client to the port it connects to makes that happen
    /// every time; with no listener there it must be refused, on both APIs, and the port must not be
    /// left in TIME_WAIT (the async connect binds the same port again, without `SO_REUSEADDR`).
    @Test func aConnectThatReachesItselfIsRefused() async throws {
        let port = unusedLoopbackPort()
        let delegate = RecordingDelegate()
        let client = TCPSocket(delegate: delegate, delegateQueue: nil)
        try client.connect(toHost: "127.0.0.1", onPort: port, viaInterface: "127.0.0.1:\(port)", withTimeout: TestTiming.hangTimeout(5))
        #expect(try await delegate.events.next() == .disconnected(.connectionRefused(operation: "connect", errno: ECONNREFUSED)))

        var options = TCPConnection.Options()
        options.localInterface = "127.0.0.1:\(port)"
        await #expect(throws: SocketError.connectionRefused(operation: "connect", errno: ECONNREFUSED)) {
            _ = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, options: options)
        }
    }

    @Test func happyEyeballsOrderInterleavesTheFamiliesPreferredFirst() throws {
        let v4 = try ["10.0.0.1", "10.0.0.2", "10.0.0.3"].map { try #require(SocketAddress(ipAddress: $0, port: 1)) }
        let v6 = try ["fd00::1", "fd00::2"].map { try #require(SocketAddress(ipAddress: $0, port: 1)) }
        let mixed = [v6[0], v4[0], v4[1], v6[1], v4[2]]
        #expect(
            ConnectionAttempts.interleave(mixed, preferring: .inet).map(\.host) == [
                "10.0.0.1", "fd00::1", "10.0.0.2", "fd00::2", "10.0.0.3"
            ])
        #expect(
            ConnectionAttempts.interleave(mixed, preferring: .inet6).map(\.host) == [
                "fd00::1", "10.0.0.1", "fd00::2", "10.0.0.2", "10.0.0.3"
            ])
        #expect(ConnectionAttempts.interleave(v4, preferring: .inet6).map(\.host) == ["10.0.0.1", "10.0.0.2", "10.0.0.3"])
    }

    @Test func aStalledFirstAddressLosesToTheNextOneAfterTheAlternateDelay() async throws {
        // An IPv4 listener whose backlog is full: a connect to it hangs (the kernel drops the SYN).
        let stuck = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(stuck) }
        var address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: 0)).sockaddrData
        let bound = address.withUnsafeMutableBytes {
            bind(stuck, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        #expect(bound == 0 && listen(stuck, 0) == 0)
        let stuckAddress = try #require(SocketAddress.read(stuck, getsockname))
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(filler) }
        address = stuckAddress.sockaddrData
        #expect(
            address.withUnsafeBytes { Glibc.connect(filler, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) }
                == 0)

        let pair = try LoopbackPair(host: "::1")
        defer { pair.close() }
        let good = try #require(SocketAddress(ipAddress: "::1", port: pair.port))
        pair.client.alternateAddressDelay = 0.05
        // Without a second attempt in parallel this would wait for the SYN retries, minutes, and the
        // wait below would give up after 10 s.
        try pair.client.connect(toAddresses: [stuckAddress, good], withTimeout: TestTiming.hangTimeout(60))
        #expect(try await pair.clientDelegate.events.next().description == "connected(::1:\(pair.port))")
        #expect(pair.client.connectedAddress == good)
    }

    @Test func disabledFamiliesAreNotTried() async throws {
        let pair = try LoopbackPair(host: "::1")
        defer { pair.close() }
        pair.client.isIPv6Enabled = false
        try pair.client.connect(toHost: "::1", onPort: pair.port, withTimeout: TestTiming.hangTimeout(5))
        #expect(
            try await pair.clientDelegate.events.next()
                == .disconnected(.badConfig("no address of an enabled family (IPv4 on, IPv6 off)")))
        pair.client.isIPv4Enabled = false
        #expect(throws: SocketError.badConfig("Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first.")) {
            try pair.client.connect(toHost: "::1", onPort: pair.port)
        }
    }

    @Test func connectTimeoutCoversNameResolution() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let delegate = RecordingDelegate()
        let socket = TCPSocket(delegate: delegate, delegateQueue: nil, group: group)
        // A stalled listener (see above) keeps the connect pending; the timeout runs on virtual time.
        let stuck = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(stuck) }
        var any = try #require(SocketAddress(ipAddress: "127.0.0.1", port: 0)).sockaddrData
        #expect(
            any.withUnsafeMutableBytes { bind(stuck, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) } == 0)
        #expect(listen(stuck, 0) == 0)
        let port = try #require(SocketAddress.read(stuck, getsockname)).port
        let filler = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(filler) }
        any = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port)).sockaddrData
        #expect(
            any.withUnsafeBytes { Glibc.connect(filler, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) } == 0)
        try socket.connect(toHost: "localhost", onPort: port, withTimeout: 2)
        await clock.advance(by: .zero)  // the connect has started: its timeout runs from now
        await clock.advance(by: .milliseconds(1999))
        #expect(delegate.events.pending.isEmpty)
        await clock.advance(by: .milliseconds(1))
        #expect(try await delegate.events.next() == .disconnected(.connectTimeout))
    }

    @Test func socketOptionsReachTheKernel() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        pair.client.keepAlive = TCPKeepAlive(idle: 30, interval: 5, count: 4)
        pair.client.receiveBufferSize = 65536
        pair.client.lingerSeconds = 0
        _ = try await pair.connect()
        let values: [Int32] = await withCheckedContinuation { continuation in
            pair.client.perform { fd in
                func get(_ level: Int32, _ name: Int32) -> Int32 {
                    var value: Int32 = -1
                    var length = socklen_t(4)
                    getsockopt(fd, level, name, &value, &length)
                    return value
                }
                var lingerValue = linger()
                var length = socklen_t(MemoryLayout<linger>.size)
                getsockopt(fd, SOL_SOCKET, SO_LINGER, &lingerValue, &length)
                continuation.resume(returning: [
                    get(SOL_SOCKET, SO_KEEPALIVE), get(Int32(IPPROTO_TCP), TCP_KEEPIDLE),
                    get(Int32(IPPROTO_TCP), TCP_KEEPINTVL), get(Int32(IPPROTO_TCP), TCP_KEEPCNT),
                    get(SOL_SOCKET, SO_RCVBUF) >= 65536 ? 1 : 0, lingerValue.l_onoff, lingerValue.l_linger
                ])
            }
        }
        #expect(values == [1, 30, 5, 4, 1, 1, 0])
        // Linger 0: disconnect resets the connection, and the peer sees it.
        guard case .accepted(let accepted) = pair.serverDelegate.events.all.first else { Issue.record("no accept"); return }
        accepted.readData(withTimeout: -1, tag: 1)
        pair.client.disconnect()
        let reset = try await pair.serverDelegate.events.first { $0.disconnectError != nil }
        #expect(reset == .disconnected(.connectionReset(operation: "read", errno: ECONNRESET)))
        #expect(reset.description == "disconnected(read: Connection reset by peer (errno 104))")
    }

    @Test func addressHelpersReadSockaddrBytes() throws {
        let v6 = try #require(SocketAddress(ipAddress: "fd00::2", port: 8080))
        let parsed = try #require(SocketAddress(sockaddr: v6.sockaddrData))
        #expect(parsed.host == "fd00::2" && parsed.port == 8080 && parsed.isIPv6 && parsed.description == "[fd00::2]:8080")
        let unix = try #require(SocketAddress(unixDomainSocketPath: "/tmp/x.sock"))
        #expect(SocketAddress(sockaddr: unix.sockaddrData)?.path == "/tmp/x.sock")
        #expect(SocketAddress(sockaddr: Data([1])) == nil)
        #expect(SocketAddress(sockaddr: Data(v6.sockaddrData.prefix(8))) == nil)
        #expect(SocketAddress(unixDomainSocketPath: String(repeating: "x", count: 200)) == nil)
    }
}
