import AsyncSocket
import Foundation
import SocketFraming

/// One LP4 echo connection of ``EchoServer/Mode/lp4PerFrame``: its own frame decoder (decoders keep
/// state between reads), and the delegate of its socket, so a frame reaches the decoder with no lookup.
/// The socket keeps it alive (as its `userData`) for as long as the connection lasts.
final class LP4Connection: TCPSocketDelegate, @unchecked Sendable {
    // Unchecked Sendable: after `start`, used only on the socket's loop thread.
    private static let maxFrameLength = UInt(EchoServer.maxFrameLength)
    private let frames = SocketFrameDecoder(EchoServer.lp4Framing)

    /// Makes a connection of `socket` (just accepted) and reads its first frame.
    static func start(on socket: TCPSocket) {
        let connection = LP4Connection()
        socket.userData = connection
        socket.delegate = connection
        connection.readNext(on: socket)
    }

    func socket(_ sock: TCPSocket, didReadFrame frame: any Sendable, withTag tag: Int) {
        // The frame is the length field and the payload (nothing stripped): echo it as it came.
        if let bytes = frame as? Data { sock.write(bytes, withTimeout: -1, tag: 0) }
        if !EchoServer.isBackedUp(sock) { readNext(on: sock) }
    }

    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        readNext(on: sock)
    }

    private func readNext(on socket: TCPSocket) {
        socket.readFrame(using: frames, withTimeout: -1, maxLength: LP4Connection.maxFrameLength, tag: 0)
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        sock.userData = nil
    }
}
