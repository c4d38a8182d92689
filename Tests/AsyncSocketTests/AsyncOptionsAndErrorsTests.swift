@testable import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

// MARK: Reading options back from a descriptor

/// The socket options the library sets, as getsockopt(2) reports them.
struct SocketOptionValues: Equatable, CustomStringConvertible {
    var noDelay: Int32 = 0
    var keepAlive: Int32 = 0
    var keepIdle: Int32 = 0
    var keepInterval: Int32 = 0
    var keepCount: Int32 = 0
    var sendBuffer: Int32 = 0
    var receiveBuffer: Int32 = 0
    var lingerOn: Int32 = 0
    var lingerSeconds: Int32 = 0
    var reusePort: Int32 = 0

    var description: String {
        "nodelay \(noDelay) keepalive \(keepAlive) \(keepIdle)/\(keepInterval)/\(keepCount) sndbuf \(sendBuffer) "
            + "rcvbuf \(receiveBuffer) linger \(lingerOn)/\(lingerSeconds) reuseport \(reusePort)"
    }

    init() {}

    init(_ fd: Int32) {
        func get(_ level: Int32, _ name: Int32) -> Int32 {
            (try? Posix.getOption(fd, level: level, name: name)) ?? -1
        }
        noDelay = get(Int32(IPPROTO_TCP), TCP_NODELAY)
        keepAlive = get(SOL_SOCKET, SO_KEEPALIVE)
        keepIdle = get(Int32(IPPROTO_TCP), TCP_KEEPIDLE)
        keepInterval = get(Int32(IPPROTO_TCP), TCP_KEEPINTVL)
        keepCount = get(Int32(IPPROTO_TCP), TCP_KEEPCNT)
        sendBuffer = get(SOL_SOCKET, SO_SNDBUF)
        receiveBuffer = get(SOL_SOCKET, SO_RCVBUF)
        reusePort = get(SOL_SOCKET, SO_REUSEPORT)
        var value = linger()
        var length = socklen_t(MemoryLayout<linger>.size)
        getsockopt(fd, SOL_SOCKET, SO_LINGER, &value, &length)
        lingerOn = value.l_onoff
        lingerSeconds = value.l_linger
    }
}

/// The options of `socket`'s descriptor, read on its event loop after every option change queued before.
func optionValues(of socket: TCPSocket) async -> SocketOptionValues {
    await withCheckedContinuation { continuation in
        socket.perform { fd in continuation.resume(returning: SocketOptionValues(fd)) }
    }
}

// MARK: TCPConnection.Options and TCPListener.Options

@Suite struct AsyncOptionTests {
    /// Options that differ from every default, with times that are not whole seconds.
    static let custom = TCPConnection.Options(
        isNoDelayEnabled: false,
        keepAlive: .init(idle: .milliseconds(60_500), interval: .seconds(11), count: 4),
        sendBufferSize: 65536,
        receiveBufferSize: 65536,
        linger: .seconds(3)
    )

    /// What `custom` looks like on a Linux descriptor: times rounded up, buffer sizes doubled.
    static var customValues: SocketOptionValues {
        var values = SocketOptionValues()
        values.keepAlive = 1
        values.keepIdle = 61
        values.keepInterval = 11
        values.keepCount = 4
        values.sendBuffer = 131072
        values.receiveBuffer = 131072
        values.lingerOn = 1
        values.lingerSeconds = 3
        return values
    }

    @Test func defaultsAreTCPSocketsDefaults() {
        let options = TCPConnection.Options()
        #expect(options.isNoDelayEnabled && options.keepAlive == nil && options.sendBufferSize == nil)
        #expect(options.receiveBufferSize == nil && options.linger == nil && !options.allowRemoteHalfClosure)
        #expect(options.isIPv4Enabled && options.isIPv6Enabled && options.prefersIPv4)
        #expect(options.alternateAddressDelay == .milliseconds(300) && options.localInterface == nil)
        let listener = TCPListener.Options()
        #expect(listener.backlog == 1024 && listener.maxPendingConnections == 128 && !listener.isReusePortEnabled)
        #expect(listener.isIPv4Enabled && listener.isIPv6Enabled && listener.connectionOptions == options)
    }

    @Test func connectOptionsReachTheClientsDescriptor() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(
            toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5),
            options: Self.custom)
        let server = try #require(try await nextConnection(listener))
        #expect(await optionValues(of: client.socket) == Self.customValues)
        // The other side keeps the defaults: no-delay on, nothing else set.
        let serverValues = await optionValues(of: server.socket)
        #expect(serverValues.noDelay == 1 && serverValues.keepAlive == 0 && serverValues.lingerOn == 0)
        // Read back in the units they were given in (times in whole seconds).
        #expect(!client.isNoDelayEnabled && client.sendBufferSize == 65536 && client.receiveBufferSize == 65536)
        #expect(client.keepAlive == .init(idle: .seconds(61), interval: .seconds(11), count: 4))
        #expect(client.linger == .seconds(3))
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func listenerConnectionOptionsReachAcceptedDescriptors() async throws {
        let listener = try await TCPListener.bind(
            host: "127.0.0.1", port: 0,
            options: .init(connectionOptions: Self.custom))
        #expect(listener.options.connectionOptions == Self.custom)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try #require(try await nextConnection(listener))
        #expect(await optionValues(of: server.socket) == Self.customValues)
        #expect(await optionValues(of: client.socket).noDelay == 1)
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func optionsChangeOnAnEstablishedConnection() async throws {
        let pair = try await ConnectedPair.open()
        pair.client.isNoDelayEnabled = false
        pair.client.keepAlive = .init(idle: .seconds(30), interval: .seconds(5), count: 2)
        pair.client.sendBufferSize = 32768
        pair.client.receiveBufferSize = 32768
        pair.client.linger = .seconds(7)
        var expected = SocketOptionValues()
        expected.keepAlive = 1
        expected.keepIdle = 30
        expected.keepInterval = 5
        expected.keepCount = 2
        expected.sendBuffer = 65536
        expected.receiveBuffer = 65536
        expected.lingerOn = 1
        expected.lingerSeconds = 7
        #expect(await optionValues(of: pair.client.socket) == expected)
        // nil turns keep-alive and lingering off again; no-delay back on.
        pair.client.keepAlive = nil
        pair.client.linger = nil
        pair.client.isNoDelayEnabled = true
        let after = await optionValues(of: pair.client.socket)
        #expect(after.keepAlive == 0 && after.lingerOn == 0 && after.noDelay == 1)
        #expect(pair.client.keepAlive == nil && pair.client.linger == nil)
        await pair.close()
    }

    @Test func connectOnlyOptionsReachTheSocket() async throws {
        let options = TCPConnection.Options(
            isIPv4Enabled: false, prefersIPv4: false,
            alternateAddressDelay: .milliseconds(50), localInterface: "::1")
        let listener = try await TCPListener.bind(host: "localhost", port: 0)  // 127.0.0.1 and ::1
        let client = try await TCPConnection.connect(
            toHost: "::1", port: listener.port, timeout: .seconds(5),
            options: options)
        #expect(client.remoteAddress?.host == "::1" && client.localAddress?.host == "::1")
        #expect(client.socket.alternateAddressDelay == 0.05)
        #expect(!client.socket.isIPv4Enabled && client.socket.isIPv6Enabled && !client.socket.isIPv4PreferredOverIPv6)
        await client.close()
        // "localhost" resolves to what /etc/hosts says; the preferred family's address wins when both are there.
        let resolved = try Resolver.resolve(host: "localhost", port: listener.port)
        for prefersIPv4 in [true, false] {
            let preferred = resolved.first { $0.isIPv4 == prefersIPv4 } ?? resolved[0]
            let connection = try await TCPConnection.connect(
                toHost: "localhost", port: listener.port, timeout: .seconds(5),
                options: .init(prefersIPv4: prefersIPv4))
            #expect(connection.remoteAddress == preferred)
            await connection.close()
        }
        let refused = try await thrownError {
            _ = try await TCPConnection.connect(
                toHost: "::1", port: listener.port, timeout: .seconds(5),
                options: .init(isIPv6Enabled: false))
        }
        #expect(refused as? SocketError == .badConfig("no address of an enabled family (IPv4 on, IPv6 off)"))
        await listener.close()
    }

    @Test func localInterfaceWithAPortBindsThatPort() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let localPort = unusedLoopbackPort()
        let client = try await TCPConnection.connect(
            toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5),
            options: .init(localInterface: "127.0.0.1:\(localPort)"))
        #expect(client.localAddress?.port == localPort)
        let server = try #require(try await nextConnection(listener))
        #expect(server.remoteAddress?.port == localPort)
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func noAddressOfAnEnabledFamilyIsABadConfig() async throws {
        let error = try await thrownError {
            _ = try await TCPConnection.connect(
                toHost: "127.0.0.1", port: 9, timeout: .seconds(5),
                options: .init(isIPv4Enabled: false))
        }
        #expect(error as? SocketError == .badConfig("no address of an enabled family (IPv4 off, IPv6 on)"))
    }

    @Test func reusePortLetsTwoListenersShareAPort() async throws {
        let options = TCPListener.Options(isReusePortEnabled: true)
        let first = try await TCPListener.bind(host: "127.0.0.1", port: 0, options: options)
        let second = try await TCPListener.bind(host: "127.0.0.1", port: first.port, options: options)
        #expect(second.port == first.port)
        #expect(await optionValues(of: first.socket).reusePort == 1)
        // Without the option on the newcomer, the port is in use.
        let error = try await thrownError { _ = try await TCPListener.bind(host: "127.0.0.1", port: first.port) }
        #expect(error as? SocketError == .addressInUse(operation: "bind", errno: EADDRINUSE))
        await first.close()
        await second.close()
    }

    @Test func listenerAddressFamilies() async throws {
        let listener = try await TCPListener.bind(host: "localhost", port: 0, options: .init(isIPv6Enabled: false))
        #expect(listener.localAddress?.host == "127.0.0.1")
        let refused = try await thrownError {
            _ = try await TCPConnection.connect(toHost: "::1", port: listener.port, timeout: .seconds(5))
        }
        #expect(refused as? SocketError == .connectionRefused(operation: "connect", errno: ECONNREFUSED))
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        await client.close()
        await listener.close()
    }

    @Test func backlogAndPendingBoundAreKept() async throws {
        let listener = try await TCPListener.bind(
            host: "127.0.0.1", port: 0,
            options: .init(backlog: 16, maxPendingConnections: 3))
        #expect(listener.options.backlog == 16 && listener.options.maxPendingConnections == 3)
        #expect(listener.bridge.maxPending == 3)
        await listener.close()
        let error = try await thrownError {
            _ = try await TCPListener.bind(host: "127.0.0.1", port: 0, options: .init(maxPendingConnections: 0))
        }
        #expect(error as? SocketError == .badParam("maxPendingConnections must be at least 1"))
    }

    @Test func unixDomainConnectByURL() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("api-\(UUID().uuidString.prefix(8)).sock").path
        let url = URL(fileURLWithPath: path)
        let listener = try await TCPListener.bind(url: url)
        let client = try await TCPConnection.connect(to: url, timeout: .seconds(5))
        #expect(client.remoteAddress?.path == path)
        let server = try #require(try await nextConnection(listener))
        try await client.write(bytes("hi"))
        #expect(text(try await within { try await server.read(exactly: 2) }) == "hi")
        await client.close()
        await server.close()
        await listener.close()
        let gone = try await thrownError { _ = try await TCPConnection.connect(to: url, timeout: .seconds(5)) }
        #expect((gone as? SocketError)?.errno == ENOENT)
    }

    @Test func durationsRoundUpToWholeSeconds() {
        #expect(wholeSeconds(.zero, minimum: 0) == 0)
        #expect(wholeSeconds(.milliseconds(1), minimum: 0) == 1)
        #expect(wholeSeconds(.seconds(2), minimum: 0) == 2)
        #expect(wholeSeconds(.milliseconds(2001), minimum: 0) == 3)
        #expect(wholeSeconds(.seconds(-5), minimum: 0) == 0)
        #expect(
            TCPConnection.KeepAlive(idle: .zero, interval: .milliseconds(10), count: 0).socketValue
                == TCPKeepAlive(idle: 1, interval: 1, count: 1))
    }
}

// MARK: SocketError cases from real failures

@Suite struct SocketErrorCaseTests {
    @Test(arguments: [
        (ECONNREFUSED, SocketError.connectionRefused(operation: "op", errno: ECONNREFUSED), true),
        (ECONNRESET, .connectionReset(operation: "op", errno: ECONNRESET), true),
        (EPIPE, .brokenPipe(operation: "op", errno: EPIPE), true),
        (EADDRINUSE, .addressInUse(operation: "op", errno: EADDRINUSE), false),
        (EADDRNOTAVAIL, .addressNotAvailable(operation: "op", errno: EADDRNOTAVAIL), false),
        (ENETUNREACH, .unreachable(operation: "op", errno: ENETUNREACH), true),
        (EHOSTUNREACH, .unreachable(operation: "op", errno: EHOSTUNREACH), true),
        (ETIMEDOUT, .connectionTimedOut(operation: "op", errno: ETIMEDOUT), true),
        (ECONNABORTED, .posix(operation: "op", errno: ECONNABORTED), true),
        (EMFILE, .posix(operation: "op", errno: EMFILE), false),
        (EACCES, .posix(operation: "op", errno: EACCES), false)
    ])
    func systemMakesTheCaseForItsErrno(code: Int32, expected: SocketError, isNetworkFailure: Bool) {
        let error = SocketError.system(operation: "op", errno: code)
        #expect(error == expected)
        #expect(error.errno == code && error.operation == "op")
        #expect(error.isNetworkFailure == isNetworkFailure)
        #expect(error.description == "op: \(String(cString: strerror(code))) (errno \(code))")
    }

    @Test func casesWithoutASystemCallHaveNoErrno() {
        for error in [SocketError.connectTimeout, .closedByPeer, .connectionClosed, .notConnected, .readTimeout(tag: 1)] {
            #expect(error.errno == nil && error.operation == nil)
        }
        #expect(SocketError.connectTimeout.isNetworkFailure && !SocketError.closedByPeer.isNetworkFailure)
    }

    @Test func logLinesAreUnchanged() {
        #expect("\(SocketError.system(operation: "connect", errno: ECONNREFUSED))" == "connect: Connection refused (errno 111)")
        #expect("\(SocketError.system(operation: "read", errno: ECONNRESET))" == "read: Connection reset by peer (errno 104)")
        #expect("\(SocketError.system(operation: "send", errno: EPIPE))" == "send: Broken pipe (errno 32)")
    }

    @Test func aPeerResetEndsTheConnectionWithConnectionReset() async throws {
        let pair = try await ConnectedPair.open()
        let reading = Task { try await pair.client.read() }
        pair.server.linger = .zero
        await pair.server.close()  // SO_LINGER 0: an RST, not a FIN
        let error = try await thrownError { _ = try await reading.value }
        #expect(error as? SocketError == .connectionReset(operation: "read", errno: ECONNRESET))
        #expect((error as? SocketError)?.isNetworkFailure == true)
        // Every later call throws the error that ended the connection; docs/ASYNC.md's catch clauses match it.
        var caught = ""
        do {
            try await pair.client.write(bytes("late"))
        } catch SocketError.connectionReset, SocketError.brokenPipe {
            caught = "reset or broken pipe"
        } catch let error as SocketError where error.isNetworkFailure {
            caught = "other network failure"
        }
        #expect(caught == "reset or broken pipe")
        await pair.close()
    }

    @Test func writingAfterAResetIsABrokenPipe() throws {
        let (client, server) = try blockingLoopbackPair()
        defer { Posix.close(client) }
        var resetAtOnce = linger(l_onoff: 1, l_linger: 0)
        setsockopt(server, SOL_SOCKET, SO_LINGER, &resetAtOnce, socklen_t(MemoryLayout<linger>.size))
        Posix.close(server)
        // Wait (bounded) for the RST to arrive; reading then reports it once, and writes are a broken pipe.
        var ready = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        #expect(throws: SocketError.connectionReset(operation: "read", errno: ECONNRESET)) {
            try Posix.read(client, into: buffer)
        }
        let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 1)
        defer { vectors.deallocate() }
        vectors[0] = iovec(iov_base: buffer.baseAddress, iov_len: 1)
        #expect(throws: SocketError.brokenPipe(operation: "send", errno: EPIPE)) {
            try Posix.writev(client, vectors)
        }
    }

    @Test func bindingAnAddressThatIsNotThisHostsIsAddressNotAvailable() async throws {
        // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address. bind(2) fails at once, no packet is sent.
        let error = try await thrownError { _ = try await TCPListener.bind(host: "192.0.2.1", port: 0) }
        #expect(error as? SocketError == .addressNotAvailable(operation: "bind", errno: EADDRNOTAVAIL))
        #expect((error as? SocketError)?.isNetworkFailure == false)
    }

    @Test func aSecondBindOfAPortIsAddressInUse() async throws {
        let first = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let error = try await thrownError { _ = try await TCPListener.bind(host: "127.0.0.1", port: first.port) }
        let inUse = try #require(error as? SocketError)
        #expect(inUse == .addressInUse(operation: "bind", errno: EADDRINUSE))
        #expect(inUse.errno == EADDRINUSE && !inUse.isNetworkFailure)
        #expect(inUse.description == "bind: Address already in use (errno 98)")
        await first.close()
    }

    /// Regression (a soak beside another test process: the connect succeeded): the port was free when
    /// chosen, and another process's server took it before the connect. A reserved port is bound and
    /// never listens, so a connect to it is refused and nobody else can take it.
    @Test func aRefusedConnectIsConnectionRefused() async throws {
        let reserved = ReservedLoopbackPort()
        defer { withExtendedLifetime(reserved) {} }
        let port = reserved.port
        let error = try await thrownError { _ = try await TCPConnection.connect(toHost: "127.0.0.1", port: port) }
        let refused = try #require(error as? SocketError)
        #expect(refused == .connectionRefused(operation: "connect", errno: ECONNREFUSED))
        #expect(refused.errno == ECONNREFUSED && refused.isNetworkFailure)
        // Pattern matching without the associated values.
        guard case .connectionRefused = refused else { Issue.record("not connectionRefused"); return }
    }
}

/// A connected pair of blocking TCP descriptors on 127.0.0.1: (client, server).
func blockingLoopbackPair() throws -> (Int32, Int32) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { Posix.close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            _ = try Posix.check("bind") { bind(listener, raw, length) }
            _ = try Posix.check("listen") { listen(listener, 1) }
            _ = try Posix.check("getsockname") { getsockname(listener, raw, &length) }
        }
    }
    let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try withUnsafePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            _ = try Posix.check("connect") { connect(client, raw, length) }
        }
    }
    let server = try Posix.check("accept") { accept(listener, nil, nil) }
    return (client, server)
}
