import SocketFraming

/// A ``WebSocketDelegate`` that reads text and binary messages as borrowed bytes, with no `Data` or
/// `String` made for each: for servers that look at a message and answer it at once (an echo, a relay, a
/// parser that keeps only what it needs), as FramedSocket's `readFrames(slicedBy:)` hands LP4 frames.
///
/// When the connection's `delegateQueue` is `nil` (calls on the socket's event loop thread), every text
/// and binary message comes through ``webSocket(_:didReceive:opcode:)`` instead of
/// ``WebSocketDelegate/webSocket(_:didReceive:)``; with a delegate queue the bytes could not outlive the
/// loop's call, so ``WebSocketDelegate/webSocket(_:didReceive:)`` is called on the queue as for any delegate.
/// Pings, Pongs and Close frames are handled as for any delegate. Whether the delegate conforms is
/// asked once per read.
public protocol WebSocketBorrowingDelegate: WebSocketDelegate {
    /// A whole text or binary message arrived: its payload, unmasked (and inflated with
    /// permessage-deflate), `opcode` `.text` (then `bytes` are valid UTF-8, RFC 6455 §8.1) or `.binary`.
    /// Called on the socket's event loop thread, in order with the other calls. `bytes` are valid only
    /// during the call (copy what you keep); ``WebSocket/send(copying:opcode:withTimeout:tag:)`` sends
    /// them (or others) back, copied once, into the socket's write staging. Must not block.
    func webSocket(_ webSocket: WebSocket, didReceive bytes: UnsafeRawBufferPointer, opcode: WebSocketOpcode)
}
