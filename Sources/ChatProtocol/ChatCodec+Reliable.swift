import LongLink

/// Reliable delivery (LongLink's ``ReliableLinkCodec``) over version 2 of the chat protocol: numbered
/// direct messages and broadcasts, `stored` acknowledgements, errors carrying an id, numbered deliveries
/// and cumulative `received` acknowledgements (docs/PROTOCOL.md "Version 2").
extension ChatCodec: ReliableLinkCodec {
    /// A direct message or broadcast of either version as a version 2 message numbered `id`:
    /// `.directMessage(to:text:)` becomes `.v2(.directMessage(id:to:text:))`, `.broadcast(text:)` becomes
    /// `.v2(.broadcast(id:text:))`, and a numbered one gets `id` instead of its own. Every other message
    /// (history requests, acknowledgements, …) carries no id and is returned unchanged.
    public func message(_ message: ChatMessage, numbered id: UInt64) -> ChatMessage {
        switch message {
        case .directMessage(let to, let text), .v2(.directMessage(_, let to, let text)):
            return .v2(.directMessage(id: id, to: to, text: text))
        case .broadcast(let text), .v2(.broadcast(_, let text)):
            return .v2(.broadcast(id: id, text: text))
        default:
            return message
        }
    }

    /// The id of a version 2 direct message or broadcast; `nil` for every other message.
    public func id(of message: ChatMessage) -> UInt64? {
        switch message {
        case .v2(.directMessage(let id, _, _)), .v2(.broadcast(let id, _)): return id
        default: return nil
        }
    }

    /// - `.v2(.stored(id:…))` is ``DeliveryRole/stored(id:)`` (stored, or passed on live when it has no
    ///   sequence number: either way the server is done with it);
    /// - `.v2(.error(…, id: id, …))` whose code ``ChatErrorCode/refusesForGood`` (`unknownRecipient`,
    ///   `badRequest`, `messageTooLong`) is ``DeliveryRole/refused(id:)``; `rateLimited` is
    ///   ``DeliveryRole/retry(id:after:)`` after its `retryAfter` seconds (1 when missing): the message
    ///   stays in the outbox and is resent then; so is `storeUnavailable` with a `retryAfter` (a server
    ///   whose store came back, a cluster node whose NATS did); with another code (`storeUnavailable`
    ///   without `retryAfter`, from servers before it, `notLoggedIn`, …) it is ``DeliveryRole/other``:
    ///   the message stays in the outbox for the next reconnect;
    /// - `.v2(.delivery(…))` with a sequence number is ``DeliveryRole/delivery(conversation:sequence:)``
    ///   (a live-only delivery, without one, is ``DeliveryRole/other``);
    /// - everything else, version 1 messages included, is ``DeliveryRole/other``.
    public func role(of message: ChatMessage) -> DeliveryRole {
        switch message {
        case .v2(.stored(let id, _, _)):
            return .stored(id: id)
        case .v2(.error(let code, _, let id?, _)) where code.refusesForGood:
            return .refused(id: id)
        case .v2(.error(.rateLimited, _, let id?, let retryAfter)):
            return .retry(id: id, after: .seconds(Int64(clamping: max(retryAfter ?? 1, 1))))
        case .v2(.error(.storeUnavailable, _, let id?, let retryAfter?)):
            return .retry(id: id, after: .seconds(Int64(clamping: max(retryAfter, 1))))
        case .v2(.delivery(_, _, _, let conversation, let sequence?, _)):
            return .delivery(conversation: conversation, sequence: sequence)
        default:
            return .other
        }
    }

    /// `.v2(.received(conversation: conversation, upTo: sequence))`.
    public func acknowledgement(conversation: String, upTo sequence: UInt64) -> ChatMessage {
        .v2(.received(conversation: conversation, upTo: sequence))
    }
}
