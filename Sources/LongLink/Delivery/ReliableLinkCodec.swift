/// What a ``ReliableLinkCodec`` says about a message the server sent, as the client's reliable delivery
/// sees it (issue 11, piece B). Client ids and sequence numbers are `UInt64`, from 1.
public enum DeliveryRole: Sendable, Equatable {
    /// The server stored (or recognised as a duplicate of one it had stored) the client's message `id`:
    /// it is durable and leaves the outbox.
    case stored(id: UInt64)
    /// The server refused the client's message `id` for good (an error carrying that id): resending it
    /// can never succeed, so it leaves the outbox.
    case refused(id: UInt64)
    /// A numbered delivery in `conversation` (the conversation's text form) with sequence number
    /// `sequence`, to be acknowledged with ``ReliableLinkCodec/acknowledgement(conversation:upTo:)`` and
    /// de-duplicated by `sequence`.
    case delivery(conversation: String, sequence: UInt64)
    /// Anything else: passed to the app as it is.
    case other
}

/// A ``LinkCodec`` whose app messages can carry client ids and whose server messages say which are
/// acknowledgements and numbered deliveries: what a long link needs to deliver reliably (an outbox
/// resent after every reconnect, cumulative acknowledgements, de-duplication by sequence number),
/// whatever the app's protocol. All methods are pure and may be called from any thread.
public protocol ReliableLinkCodec: LinkCodec {
    /// `message` (an app message the client sends) carrying client id `id`. Messages that cannot carry
    /// an id are returned unchanged (``id(of:)`` of the result is then `nil`).
    func message(_ message: Message, numbered id: UInt64) -> Message
    /// The client id `message` carries, if it is a numbered app message (for persistence and resend).
    func id(of message: Message) -> UInt64?
    /// What `message`, received from the server, means to reliable delivery.
    func role(of message: Message) -> DeliveryRole
    /// The cumulative acknowledgement "I have everything of `conversation` up to `sequence`", which the
    /// client sends to the server.
    func acknowledgement(conversation: String, upTo sequence: UInt64) -> Message
}
