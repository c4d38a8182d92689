import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UDPSocket {
    /// Connects to `host` (a name or a numeric address) on `port` (GCDAsyncUdpSocket's
    /// `connectToHost:onPort:error:`). A UDP connect sends nothing: it makes the socket send only to
    /// that address (``send(_:withTimeout:tag:)``), receive only from it, and hear of ICMP errors for it
    /// (a refused port fails a later send or receive with ``SocketError/connectionRefused(operation:errno:)``).
    /// The connect runs through the send queue: sends queued before it go out unconnected, those after
    /// wait for it. The name resolves on a global dispatch queue; the address is picked by
    /// ``ipVersionPreference``; the descriptor of the other family is closed. The outcome arrives as
    /// ``UDPSocketDelegate/udpSocket(_:didConnectToAddress:)`` or
    /// ``UDPSocketDelegate/udpSocket(_:didNotConnect:)``; after a failure the socket stays usable and may
    /// connect again.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is connected or connecting already
    ///   ("Cannot connect a socket more than once."), or both families are disabled;
    ///   ``SocketError/disconnecting`` after ``closeAfterSending()``.
    public func connect(toHost host: String, onPort port: UInt16) throws(SocketError) {
        try claimConnect()
        let lookup = host == "loopback" ? "localhost" : host
        if let literal = SocketAddress(ipAddress: lookup, port: port) {
            enqueue(UDPSendRequest(kind: .connect, destination: .address(literal), timeout: -1, tag: 0))
        } else {
            enqueue(UDPSendRequest(kind: .connect, destination: .resolving(host: lookup), timeout: -1, tag: 0), resolvingPort: port)
        }
    }

    /// Connects to `address` (GCDAsyncUdpSocket's `connectToAddress:error:`), as
    /// ``connect(toHost:onPort:)`` without a name to resolve; the outcome still arrives through the delegate.
    /// - Throws: as ``connect(toHost:onPort:)``.
    public func connect(to address: SocketAddress) throws(SocketError) {
        try claimConnect()
        enqueue(UDPSendRequest(kind: .connect, destination: .address(address), timeout: -1, tag: 0))
    }

    /// Connects to the `sockaddr` in `address` (GCDAsyncUdpSocket's `connectToAddress:error:` with `NSData`).
    /// - Throws: ``SocketError/badParam(_:)`` when the bytes are not an IPv4 or IPv6 `sockaddr`; as ``connect(to:)``.
    public func connect(toAddress address: Data) throws(SocketError) {
        guard let parsed = SocketAddress(sockaddr: address), parsed.family != .unix else {
            throw SocketError.badParam("not an IPv4 or IPv6 sockaddr")
        }
        try connect(to: parsed)
    }

    private func claimConnect() throws(SocketError) {
        try shared.withLock { shared throws(SocketError) in
            guard shared.connectStage == .none else { throw SocketError.badConfig("Cannot connect a socket more than once.") }
            guard !shared.closingAfterSends else { throw SocketError.disconnecting }
            guard shared.options.isIPv4Enabled || shared.options.isIPv6Enabled else {
                throw SocketError.badConfig("Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first.")
            }
            shared.connectStage = .connecting
        }
    }

    /// Connects the descriptor of `address`'s family (making it when there is none, closing the other
    /// family's) and reports the outcome. Loop thread only.
    func performConnect(to address: SocketAddress) {
        let failed: (SocketError) -> Void = { [self] error in
            shared.withLock { $0.connectStage = .none }
            emit(.notConnected(error))
        }
        let options = shared.withLock { $0.options }
        guard address.family == .inet ? options.isIPv4Enabled : (address.family == .inet6 && options.isIPv6Enabled) else {
            failed(.badConfig("cannot connect to \(address): its family is disabled or not IP"))
            return
        }
        let channel: DatagramChannel
        if let existing = self.channel(address.family) {
            channel = existing
        } else if channels.isEmpty {
            do { channel = try openChannel(address.family) } catch {
                failed(error)
                return
            }
        } else {
            failed(.badConfig("the socket is bound to \(address.family == .inet ? "IPv6" : "IPv4") only; cannot connect to \(address)"))
            return
        }
        let outcome = address.withSockAddr { pointer, length in
            Result { () throws(SocketError) in
                _ = try Posix.check("connect") { CAsyncSocketShims.connect(channel.fd, pointer, length) }
            }
        }
        if case .failure(let error) = outcome {
            failed(error)
            return
        }
        for other in channels where other !== channel { closeChannel(other) }
        shared.withLock {
            $0.connectStage = .connected
            $0.connectedAddress = address
        }
        didBind()
        emit(.connected(address))
    }
}
