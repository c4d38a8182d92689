import AsyncSocket
import Foundation

/// A ``TCPSocketDelegate`` made of closures, so the link types keep their socket handling out of their
/// public API. Owners set the closures once, before any socket uses this delegate, and capture
/// themselves weakly. Unchecked: the closures are written before use and only read afterwards.
final class SocketCallbacks: TCPSocketDelegate, @unchecked Sendable {
    var didAccept: (TCPSocket) -> Void = { _ in }
    var didConnect: (TCPSocket, String, UInt16) -> Void = { _, _, _ in }
    var didWrite: (TCPSocket, Int) -> Void = { _, _ in }
    var didSecure: (TCPSocket) -> Void = { _ in }
    var didDisconnect: (TCPSocket, SocketError?) -> Void = { _, _ in }
    var didExceedHighWatermark: (TCPSocket, Int) -> Void = { _, _ in }
    var didFallToLowWatermark: (TCPSocket, Int) -> Void = { _, _ in }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) { didAccept(newSocket) }
    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) { didConnect(sock, host, port) }
    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) { didWrite(sock, tag) }
    func socketDidSecure(_ sock: TCPSocket) { didSecure(sock) }
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) { didDisconnect(sock, err) }
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {
        didExceedHighWatermark(sock, queuedBytes)
    }
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        didFallToLowWatermark(sock, queuedBytes)
    }
}
