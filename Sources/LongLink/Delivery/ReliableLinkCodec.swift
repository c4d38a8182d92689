/// A ``LinkCodec`` whose protocol numbers messages, so that ``LongLinkClient`` can deliver reliably
/// (issue 11): every app message the client sends carries a client id and stays in an outbox until the
/// server answers ``DeliveryRole/stored(id:)`` or ``DeliveryRole/refused(id:)``; every delivery the
/// server sends carries a per-conversation sequence number that the client acknowledges cumulatively.
///
/// ```
/// client                                   server
///   ── message #17 ───────────────────────▶  stores it (or finds #17 already stored)
///   ◀──────────────────────── stored #17 ──  → .stored(id: 17): leaves the outbox
///   ◀──────── delivery "room" sequence 5 ──  → .delivery: passed on once
///   ── acknowledgement "room" up to 5 ────▶  (cumulative, at most one per conversation per loop pass)
/// ```
///
/// The link calls these methods on its event loop; they must be pure (no I/O, no shared state).
public protocol ReliableLinkCodec: LinkCodec {
    /// `message` (an app message given to ``LongLinkClient/send(_:)``) carrying client id `id`.
    ///
    /// Messages the protocol does not number (a history request, say) are returned unchanged: the link
    /// tells the two apart with ``id(of:)`` and sends unnumbered messages as a plain link does.
    func message(_ message: Message, numbered id: UInt64) -> Message
    /// The client id `message` carries, or `nil` when it is not a numbered app message.
    func id(of message: Message) -> UInt64?
    /// What `message`, arriving from the server, means for delivery.
    func role(of message: Message) -> DeliveryRole
    /// The cumulative acknowledgement "I have everything of `conversation` up to `sequence`".
    func acknowledgement(conversation: String, upTo sequence: UInt64) -> Message
}
