extension TCPSocket {
    /// A socket connected on the fake descriptor `fd` of an embedded loop (``EventLoop/embedded(_:)``),
    /// as if `accept(2)` had just returned it: registered with the loop and ready for reads and writes,
    /// with no connect callback. Call on the loop's thread; the socket's system calls go to the loop's
    /// ``ScriptedSocketIO``. Its delegate is called inline on the loop's thread (no delegate queue).
    ///
    /// Leave the options that are applied to the descriptor itself (``isNoDelayEnabled``,
    /// ``keepAlive``, the buffer sizes, ``lingerSeconds``) alone: they are set with real `setsockopt(2)`.
    package static func embedded(fd: Int32, on loop: EventLoop, delegate: (any TCPSocketDelegate)?) -> TCPSocket {
        precondition(loop.isEmbedded && loop.inEventLoop, "an embedded socket needs an embedded loop, on its thread")
        var template = Shared()
        template.delegate = delegate
        let socket = TCPSocket(
            connected: fd, local: nil, remote: nil, on: loop, group: EventLoopGroup(wrapping: [loop]), like: template)
        socket.startConnected()
        return socket
    }
}
