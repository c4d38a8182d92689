import AsyncSocket

/// The app's sends whose frames are still with the socket, by the tag their TCP writes carry (loop-
/// confined, owned by a ``WebSocket``). Each send gets its own write tag, 1, 2, 3, …, so its completion
/// and its timeout are told apart from the connection's own writes (handshake, Pong, Close: tag 0),
/// and the app's tag is handed back once the send's last frame is with the kernel.
struct WebSocketPendingSends {
    private var lastWriteTag = 0
    /// The app's tag and how many of its writes are not done yet, by write tag.
    private var sends: [Int: (tag: Int, writes: Int)] = [:]

    /// A new send's write tag (always above 0).
    mutating func begin() -> Int {
        lastWriteTag = lastWriteTag == .max ? 1 : lastWriteTag + 1
        return lastWriteTag
    }

    /// One more write was queued for the send of `writeTag`.
    mutating func queued(_ writeTag: Int, tag: Int) {
        sends[writeTag, default: (tag, 0)].writes += 1
    }

    /// One write of `writeTag` is done: the app's tag once the send's every write is, else nil (and nil
    /// for the connection's own writes).
    mutating func wrote(_ writeTag: Int) -> Int? {
        guard var send = sends[writeTag] else { return nil }
        send.writes -= 1
        sends[writeTag] = send.writes > 0 ? send : nil
        return send.writes > 0 ? nil : send.tag
    }

    /// A write of `writeTag` was refused: the app's tag, once per send.
    mutating func rejected(_ writeTag: Int) -> Int? {
        sends.removeValue(forKey: writeTag)?.tag
    }

    /// `error` with a write timeout's write tag replaced by the app's tag of that send.
    func appTagged(_ error: SocketError?) -> SocketError? {
        guard case .writeTimeout(let writeTag)? = error, let send = sends[writeTag] else { return error }
        return .writeTimeout(tag: send.tag)
    }

    /// The connection ended: what was not written never will be.
    mutating func removeAll() { sends = [:] }
}
