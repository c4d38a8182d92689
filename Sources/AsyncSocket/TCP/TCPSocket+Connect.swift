import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPSocket {
    /// Connects to `host` (a name or a numeric IPv4/IPv6 address) on `port`, trying each address the
    /// name resolves to in turn until one accepts. Returns at once; the outcome arrives as
    /// ``TCPSocketDelegate/socket(_:didConnectToHost:port:)`` or as
    /// ``TCPSocketDelegate/socketDidDisconnect(_:withError:)`` with the error of the last address tried.
    /// Name resolution runs on a global dispatch queue, never on the event loop.
    ///
    /// - Parameters:
    ///   - timeout: seconds for the whole connect, name resolution included; negative means none.
    ///     On expiry the socket disconnects with ``SocketError/connectTimeout``.
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is already connecting, connected or
    ///   listening, or has no delegate.
    public func connect(toHost host: String, onPort port: UInt16, withTimeout timeout: TimeInterval = -1) throws(SocketError) {
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            let generation = startConnect(timeout: timeout)
            Resolver.resolveAsync(host: host, port: port) { [self] result in
                onLoop { [self] in
                    guard generation == connectGeneration, state == .connecting else { return }
                    switch result {
                    case .success(let addresses):
                        pendingAddresses = addresses
                        connectToNextAddress()
                    case .failure(let error):
                        close(error: error)
                    }
                }
            }
        }
    }

    /// Connects to a socket address (GCDAsyncSocket's `connectToAddress:withTimeout:error:`).
    ///
    /// - Parameter timeout: seconds; negative means none.
    /// - Throws: ``SocketError/badConfig(_:)`` as ``connect(toHost:onPort:withTimeout:)``.
    public func connect(to address: SocketAddress, withTimeout timeout: TimeInterval = -1) throws(SocketError) {
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            _ = startConnect(timeout: timeout)
            pendingAddresses = [address]
            connectToNextAddress()
        }
    }

    /// Enters the connecting state on the loop and starts the connect timeout. Returns the attempt's
    /// generation, which a late resolver answer must match.
    private func startConnect(timeout: TimeInterval) -> UInt64 {
        state = .connecting
        connectGeneration &+= 1
        let generation = connectGeneration
        if timeout >= 0 {
            connectTimer = eventLoop.scheduleTask(in: .seconds(timeout)) { [self] in
                guard generation == connectGeneration, state == .connecting else { return }
                close(error: .connectTimeout)
            }
        }
        return generation
    }

    /// Starts a nonblocking `connect(2)` to the next resolved address, or gives up with the last error.
    func connectToNextAddress() {
        while !pendingAddresses.isEmpty {
            let address = pendingAddresses.removeFirst()
            do {
                let socketFD = try makeStreamSocket(address.family)
                let started = address.withSockAddr { pointer, length in
                    CAsyncSocketShims.connect(socketFD, pointer, length)
                }
                let code = started == 0 ? 0 : cass_errno()
                guard code == 0 || code == EINPROGRESS else {
                    Posix.close(socketFD)
                    lastConnectError = .posix(operation: "connect", errno: code)
                    continue
                }
                fd = socketFD
                try eventLoop.register(socketFD, handler: self, interest: [.write])
                interest = [.write]
                // Loopback may connect at once; either way the socket turns writable.
                return
            } catch {
                if fd >= 0 {
                    Posix.close(fd)
                    fd = -1
                }
                lastConnectError = error
            }
        }
        close(error: lastConnectError ?? .badParam("no address to connect to"))
    }

    /// The connecting descriptor turned writable: the connect finished, one way or the other.
    func finishConnect() {
        let code: Int32
        do {
            code = try Posix.getOption(fd, level: SOL_SOCKET, name: SO_ERROR)
        } catch {
            code = error.errno ?? EIO
        }
        guard code == 0 else {
            eventLoop.deregister(fd)
            Posix.close(fd)
            fd = -1
            interest = []
            lastConnectError = .posix(operation: "connect", errno: code)
            connectToNextAddress()
            return
        }
        connectTimer?.cancel()
        connectTimer = nil
        pendingAddresses = []
        lastConnectError = nil
        let local = SocketAddress.read(fd, getsockname)
        let remote = SocketAddress.read(fd, getpeername)
        state = .connected
        shared.withLock {
            $0.state = .connected
            $0.localAddress = local
            $0.remoteAddress = remote
        }
        notify { $0.socket(self, didConnectToHost: remote?.host ?? "", port: remote?.port ?? 0) }
        guard state == .connected else { return }
        updateInterest()
        processReads()
        armWriteTimer()
        if disconnectAfterWritingRequested && writeQueue.isEmpty {
            close(error: nil)
        } else {
            flushWrites()
        }
    }

    /// A nonblocking, close-on-exec TCP socket of `family` with this socket's options applied.
    func makeStreamSocket(_ family: SocketAddress.Family) throws(SocketError) -> Int32 {
        let domain = family == .inet6 ? AF_INET6 : AF_INET
        let socketFD = try Posix.check("socket") { socket(domain, cass_sock_stream_nonblock(), 0) }
        do {
            try applyNoDelay(socketFD)
            #if canImport(Darwin)
            try Posix.setOption(socketFD, level: SOL_SOCKET, name: SO_NOSIGPIPE, value: 1)
            #endif
        } catch {
            Posix.close(socketFD)
            throw error
        }
        return socketFD
    }
}
