import AsyncSocket
import Foundation

/// The timers a ``LinkMachine`` asks its driver for, at most one of each kind at a time: scheduling a
/// kind again replaces the one running.
enum LinkTimer: Hashable, Sendable, CaseIterable {
    /// The wait before the next connect attempt.
    case reconnect
    /// The next heartbeat (fixed), or the next look at how long the link has been idle (smart).
    case heartbeat
    /// The time a heartbeat leaves the server to send anything.
    case acknowledgement
    /// ``LongLinkClient/Configuration/linkHealthyAfter``: the connection has stayed up; the reconnect
    /// schedule starts over.
    case healthy
    /// Reliable delivery: the end of a pause the server asked for (``DeliveryRole/retry(id:after:)``).
    case retry
    /// ``LongLinkClient/Configuration/drainTimeout``: closing after sending stops waiting.
    case drain
}

/// What a store call that a ``LinkMachine`` asked for leads to once it is done.
enum AfterPersist: Sendable, Equatable {
    /// Write the acknowledgements it allows (a delivery flush during the connection).
    case acknowledge
    /// Write them, then close after writing (the end of closing after sending).
    case closeAfterDrain
    /// Only count its failures (the link stopped).
    case countFailures
}

/// Everything that happens to a link, fed to ``LinkMachine/handle(_:)`` on the link's loop.
enum LinkInput<Codec: LinkCodec>: Sendable {
    /// ``LongLinkClient/connect()``.
    case connect
    /// ``LongLinkClient/disconnect()``.
    case disconnect
    /// ``LongLinkClient/disconnectAfterSending()``.
    case disconnectAfterSending
    /// ``LongLinkClient/send(_:)`` of a message that is not numbered (or a plain link).
    case send(Codec.Message)
    /// Reliable delivery: `message`, numbered `id` and encoded as `frame`, is in the store: it joins the
    /// outbox.
    case admitted(id: UInt64, frame: Data, message: Codec.Message)
    /// ``LongLinkClient/send(_:)`` did not accept `message`.
    case sendRejected(Codec.Message, LongLinkClient<Codec>.SendFailure)
    /// The socket connected to `host` and `port`; `greeting` is the app's greeting now.
    case socketConnected(host: String, port: UInt16, greeting: Codec.Message?)
    /// The connect could not even start.
    case connectFailed(SocketError)
    /// The current socket disconnected (`nil`: cleanly, or as asked).
    case socketDisconnected(SocketError?)
    /// The current socket finished its TLS handshake.
    case secured(protocolVersion: String, isSessionReused: Bool)
    /// One whole frame arrived.
    case frame(Codec.Decoder.Frame)
    /// Every app message written with a tag up to `tag` is with the kernel.
    case written(upTo: Int)
    /// The socket's write queue went over its high watermark.
    case writeQueueFull
    /// The socket's write queue fell to its low watermark.
    case writeQueueDrained
    /// A timer the machine scheduled fired.
    case timerFired(LinkTimer)
    /// The network may have changed: reported by the app (always acted on) or by the smart
    /// heartbeat's route source (acted on when the network identifier differs).
    case networkChanged(reportedByApp: Bool)
    /// The end of the loop pass in which ``LinkAction/scheduleFlush`` was asked for.
    case flushDue
    /// A store call asked for with ``LinkAction/persist(through:then:)`` is done.
    case persisted(ReliableDelivery<Codec.Message>.Persisted, then: AfterPersist)
}

/// What a ``LinkMachine`` asks its driver to do, in order.
enum LinkAction<Codec: LinkCodec>: Sendable {
    /// Start watching the smart heartbeat's route changes (``SmartHeartbeat/networkChanges``).
    case watchNetwork
    /// Make a socket and connect it to `endpoint` within `timeout` seconds.
    case connect(Endpoint, timeout: TimeInterval)
    /// Start TLS on the socket with these settings.
    case startTLS(TLSConfiguration)
    /// Start reading frames from the socket.
    case startReading
    /// Write `data` with `tag` (``LinkMachine/controlTag`` for heartbeats, greetings, acknowledgements
    /// and outbox frames).
    case write(Data, tag: Int)
    /// Close the socket (`afterWriting`: once the queued writes are out); its disconnect is reported.
    case close(afterWriting: Bool)
    /// Forget the socket and close it; its disconnect is not reported.
    case abandonSocket
    /// Pass `event` to the app.
    case emit(LongLinkClient<Codec>.Event)
    /// Run `timer` after `delay` (replacing a running one of the same kind).
    case schedule(LinkTimer, after: Duration)
    /// Stop `timer` if it runs.
    case cancel(LinkTimer)
    /// Feed ``LinkInput/flushDue`` at the end of the current loop pass.
    case scheduleFlush
    /// Bring the delivery store up to date with every flush taken up to `through`, off the loop, then
    /// feed ``LinkInput/persisted(_:then:)``.
    case persist(through: UInt64, then: AfterPersist)
}
