/// What a ``ReliableLinkCodec`` says about a message arriving at the client (server → client), so that
/// ``LongLinkClient`` can keep its outbox and its receive positions without knowing the protocol.
public enum DeliveryRole: Sendable, Equatable {
    /// The server stored my message `id` durably (or found it already stored: a resend it
    /// de-duplicated). The message leaves the outbox.
    case stored(id: UInt64)
    /// The server refused my message `id` for good (an error that names the id). The message leaves the
    /// outbox; it is not resent.
    case refused(id: UInt64)
    /// The server did not take my message `id` now (it came too fast: a rate limit) and will after
    /// `after`. The message stays in the outbox; the link sends nothing more from the outbox for `after`,
    /// then resends every unanswered message from the oldest, in id order (or sooner, after a
    /// reconnect), one in flight at a time until the outbox is empty (``Outbox/slowDown()``). The server de-duplicates by id, so a message resent that it had taken after all is
    /// not stored twice.
    case retry(id: UInt64, after: Duration)
    /// A delivery numbered `sequence` (from 1, without gaps) in `conversation` (the protocol's text form
    /// of a conversation id), to pass on once and acknowledge.
    case delivery(conversation: String, sequence: UInt64)
    /// Anything else: passed to the app as it is.
    case other
}
