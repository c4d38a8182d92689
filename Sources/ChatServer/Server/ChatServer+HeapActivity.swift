import LongLink

extension ChatServer {
    /// What the server does steadily that allocates and frees heap memory, counted since the start:
    /// heartbeats answered (over TCP and WebSocket) and messages delivered. The `background` count of
    /// `im-server`'s heap trimmer (`HeapTrimmer`; its bursts are ``ChatMetrics/sessionEvents``):
    /// answering heartbeats reuses the free pages a trim gave back, a few at a time (at 19,000 idle
    /// users the RSS grew back ~29 KiB a second after a trim, issue 35 §2), so a server whose users only
    /// send heartbeats is still trimmed, every `longestDelay`. Any thread; relaxed atomic reads.
    public var steadyActivity: UInt64 {
        UInt64(clamping: link.heartbeatsAnswered) &+ metrics.messagesDelivered.value
    }
}
