import ChatProtocol
import Foundation
import LongLink
import SocketLog

/// Messages into the store and out to their readers: group commit, acknowledgements, the stored
/// sessions' delivery windows, receipts and history.
extension Router {
    /// Messages waiting for the next group commit, positions waiting to be saved, and what version 1
    /// messages are numbered with.
    struct DeliveryState {
        var pendingMessages: [PendingMessage] = []
        /// Acknowledged positions waiting to be saved with the next group commit.
        var pendingPositions: [(user: String, conversation: ConversationID, sequence: UInt64)] = []
        var flushScheduled = false
        /// Names the store is known to hold (users are never removed), so a message to one of them needs
        /// no lookup in the store.
        var knownUsers: Set<String> = []
        /// Numbers version 1 messages, which carry no id, for the store's de-duplication key.
        var nextV1MessageID: UInt64 = 1
        /// Distinguishes this process's version 1 messages from another run's in the store.
        let v1Instance = "v1-" + UUID().uuidString.lowercased()
    }

    /// A message waiting for the next group commit, with who sent it and how to acknowledge it.
    struct PendingMessage {
        let message: NewMessage
        let session: any ChatPeer
        /// The client's id (version 2); nil for version 1, which gets no acknowledgement.
        let id: UInt64?
        var version: ChatProtocolVersion { id == nil ? .v1 : .v2 }
    }

    /// Unacknowledged deliveries a stored session may have outstanding (docs/PROTOCOL.md "Version 2").
    static let deliveryWindow = 256

    /// Seconds after which a client resends a message the store could not take (`storeUnavailable`'s
    /// `retryAfter`): 1.
    static let storeRetryAfter: UInt64 = 1

    /// The answer to numbered message `id` when the store failed: `storeUnavailable`, resend after
    /// ``storeRetryAfter`` seconds.
    static func storeUnavailable(id: UInt64?) -> ChatMessage {
        .v2(
            .error(
                code: .storeUnavailable, detail: "the message store failed; resent in \(storeRetryAfter) s", id: id,
                retryAfter: storeRetryAfter))
    }

    /// Checks a direct message (`recipient` set) or broadcast and queues it for the next group commit.
    func submit(_ conversation: ConversationID, recipient: String?, text: String, from sender: String, id: UInt64?, session: Session) {
        let version: ChatProtocolVersion = id == nil ? .v1 : .v2
        guard !text.allSatisfy(\.isWhitespace) else {
            metrics.refused(.badRequest)
            session.send(Router.error(.badRequest, "empty message", id: id, version: version))
            return
        }
        let textBytes = ChatCodec.jsonTextBytes(text)
        guard textBytes <= ChatCodec.maxTextBytes else {
            metrics.refused(.messageTooLong)
            logOnce(
                "message too long: \(sender) sent a text of \(textBytes) bytes (at most \(ChatCodec.maxTextBytes)); refused",
                level: .info, source: "session \(session.id)", kind: "too long")
            session.send(
                Router.error(
                    .messageTooLong,
                    "the text is \(textBytes) bytes; at most \(ChatCodec.maxTextBytes) "
                        + "(UTF-8, as written in JSON)", id: id, version: version))
            return
        }
        if let recipient {
            let known: Bool
            do {
                known =
                    try delivery.knownUsers.contains(recipient)
                    || Router.couldBeAUser(recipient) && store.user(named: recipient)?.name == recipient
                if known { delivery.knownUsers.insert(recipient) }
            } catch {
                logger.error("store error reading user \(recipient): \(error)")
                metrics.refused(.storeUnavailable)
                if version == .v2 { session.send(Router.storeUnavailable(id: id)) }
                return
            }
            guard known else {
                metrics.refused(.unknownRecipient)
                session.send(Router.error(.unknownRecipient, "no user named \(recipient) has ever logged in", id: id, version: version))
                return
            }
        }
        let clientID: UInt64
        if let id {
            clientID = id
        } else {
            clientID = delivery.nextV1MessageID
            delivery.nextV1MessageID += 1
        }
        let instance = users[sender]?.clientInstance ?? delivery.v1Instance
        let message = NewMessage(
            conversation: conversation, sender: sender, text: text, time: Date(),
            clientInstance: instance, clientID: clientID)
        delivery.pendingMessages.append(PendingMessage(message: message, session: session, id: id))
        scheduleFlush()
    }

    /// Commits what is pending at the end of this pass over the queue: every message submitted meanwhile
    /// in one transaction (group commit), then the acknowledgements and deliveries.
    func scheduleFlush() {
        guard !delivery.flushScheduled else { return }
        delivery.flushScheduled = true
        queue.async { [self] in flush() }
    }

    func flush() {
        assertOnQueue()
        delivery.flushScheduled = false
        if !delivery.pendingPositions.isEmpty {
            let positions = delivery.pendingPositions
            delivery.pendingPositions = []
            do { try store.setPositions(positions) } catch { logger.error("store error saving \(positions.count) positions: \(error)") }
        }
        guard !delivery.pendingMessages.isEmpty else { return }
        let batch = delivery.pendingMessages
        delivery.pendingMessages = []
        let outcomes: [AppendOutcome?]
        let commitStarted = ContinuousClock.now
        do {
            outcomes = try store.append(batch.map(\.message))
        } catch {
            // One bad message must not fail the others: each alone.
            outcomes = batch.map { item in
                do {
                    return try store.append([item.message]).first
                } catch {
                    logger.error("store error: message from \(item.message.sender) not stored: \(error)")
                    return nil
                }
            }
        }
        metrics.storeCommitSeconds.observe(ContinuousClock.now - commitStarted)
        for (item, outcome) in zip(batch, outcomes) {
            let conversation = item.message.conversation
            guard let outcome else {
                metrics.refused(.storeUnavailable)
                if let id = item.id {
                    item.session.send(Router.storeUnavailable(id: id))
                }
                continue
            }
            if case .stored = outcome { metrics.messagesStored.increment() }
            if let id = item.id {
                item.session.send(.v2(.stored(id: id, conversation: conversation.description, sequence: outcome.sequence)))
            }
            // A duplicate goes to the stored sessions again (their windows make that a no-op when
            // they had it): its first append may have failed after storing it (a batch that failed
            // part-way, a store request that timed out after the write), so that nobody was told.
            // Live-only sessions, which have no sequence to tell a repeat by, get only what is new.
            let message = item.message
            logger.trace(
                "path: \(conversation)#\(outcome.sequence) from \(message.sender) \(outcome == .stored(sequence: outcome.sequence) ? "stored here" : "found stored already")"
            )
            fanOut(
                StoredMessage(
                    conversation: conversation, sequence: outcome.sequence, sender: message.sender, text: message.text,
                    time: message.time, clientInstance: message.clientInstance, clientID: message.clientID),
                storedSessionsOnly: outcome != .stored(sequence: outcome.sequence))
        }
    }

    /// A newly stored message to everyone online who reads its conversation (``FanOut``): stored
    /// sessions through their windows, live-only ones at once. `storedSessionsOnly`: through the windows
    /// only (a message the store reports as a duplicate).
    func fanOut(_ message: StoredMessage, storedSessionsOnly: Bool = false) {
        if !logins.windowNotes.isEmpty { noteForWindowsBeingRead(message) }
        let plan = FanOut.plan(message, users: &sessions.users, storedSessionsOnly: storedSessionsOnly)
        let tracing = logger.logLevel == .trace  // asked once, not per reader
        for name in plan.windows {
            if tracing { logger.trace("path: \(message.conversation)#\(message.sequence) in \(name)'s window") }
            pump(name, fresh: message)
        }
        metrics.messagesDelivered.increment(by: UInt64(plan.live.count))
        if tracing { for name in plan.live { logger.trace("path: \(message.conversation)#\(message.sequence) live to \(name)") } }
        perform(plan.actions)
    }

    /// Sends a stored session what its window has room for, in order, reading pages from the store
    /// (`fresh`, the message just stored, is sent without reading it back).
    func pump(_ name: String, fresh: StoredMessage? = nil) {
        guard let session = users[name]?.session, var window = users[name]?.window else { return }
        defer { sessions.users[name]?.window = window }
        let tracing = logger.logLevel == .trace
        while var fetch = window.nextFetch() {
            let page: [StoredMessage]
            if let fresh, fresh.conversation.description == fetch.conversation, fetch.after + 1 == fresh.sequence {
                fetch.limit = 1
                page = [fresh]
            } else {
                guard let conversation = ConversationID(fetch.conversation) else { return }
                do {
                    page = try store.messages(in: conversation, after: fetch.after, limit: fetch.limit)
                } catch {
                    logger.error("store error reading \(fetch.conversation) for \(name): \(error)")
                    return
                }
            }
            metrics.messagesDelivered.increment(by: UInt64(page.count))
            for message in page {
                if tracing { logger.trace("path: \(fetch.conversation)#\(message.sequence) sent to \(name)") }
                session.send(
                    .v2(
                        .delivery(
                            from: message.sender, text: message.text, isDirect: message.conversation != .room,
                            conversation: fetch.conversation, sequence: message.sequence, time: message.time)))
            }
            window.sent(fetch)
        }
    }

    /// The client of `name` has everything of `conversation` up to `sequence`: saved with the next
    /// group commit, a receipt to the other user of a direct conversation, and room for more deliveries.
    func acknowledge(_ conversation: String, upTo sequence: UInt64, by name: String) {
        guard var window = users[name]?.window, let id = ConversationID(conversation), id == .room || id.hasMember(name) else { return }
        guard window.acknowledge(conversation: conversation, upTo: sequence) else { return }
        let position = window.positions[conversation] ?? sequence
        sessions.users[name]?.window = window
        delivery.pendingPositions.append((user: name, conversation: id, sequence: position))
        scheduleFlush()
        if let other = id.otherUser(than: name) {
            if let reader = users[other] {
                if reader.window != nil { reader.session.send(.v2(.receipt(conversation: conversation, upTo: position, by: name))) }
            } else {
                cluster?.sendReceipt(conversation, upTo: position, by: name)
            }
        }
        pump(name)
    }

    /// The last `limit` messages of `conversation`, oldest first, as many as fit in one message.
    func sendHistory(of conversation: String, limit: Int, to name: String) {
        guard let user = users[name] else { return }
        func refuse(_ code: ChatErrorCode, _ detail: String) {
            user.session.send(.v2(.error(code: code, detail: detail, id: nil, retryAfter: nil)))
        }
        guard user.window != nil else {
            refuse(.historyUnavailable, "history is kept only for names claimed with a password")
            return
        }
        guard let id = ConversationID(conversation), id == .room || id.hasMember(name) else {
            refuse(.badRequest, "\(conversation) is not a conversation of \(name)")
            return
        }
        do {
            var entries = try store.lastMessages(in: id, limit: limit).map {
                ChatHistoryEntry(sequence: $0.sequence, from: $0.sender, text: $0.text, time: $0.time)
            }
            var answer = ChatMessage.v2(.history(conversation: conversation, messages: entries))
            while !entries.isEmpty, (try? ChatCodec().encode(answer)) == nil {
                entries.removeFirst()
                answer = .v2(.history(conversation: conversation, messages: entries))
            }
            user.session.send(answer)
        } catch {
            logger.error("store error reading history of \(conversation): \(error)")
            refuse(.storeUnavailable, "the message store failed; try again later")
        }
    }

    /// Removes what `policy` no longer keeps, and logs how many messages went.
    func applyRetention(_ policy: RetentionPolicy) {
        assertOnQueue()
        do {
            let removed = try store.applyRetention(policy, now: Date())
            if removed > 0 { logger.info("retention removed \(removed) messages") }
        } catch {
            logger.error("store error applying retention: \(error)")
        }
    }
}
