import ChatProtocol

/// Who a newly stored message goes to, and how (Router+Delivery): a service with no socket and no
/// store, from the message and the users online to the windows that now hold it and the live
/// deliveries to send.
enum FanOut {
    /// What ``plan(_:users:storedSessionsOnly:)`` decided.
    struct Plan {
        /// Stored sessions whose delivery windows now include the message, in the order found: the
        /// router sends each what its window has room for.
        var windows: [String] = []
        /// Live-only readers, by name (for the trace log).
        var live: [String] = []
        /// The live deliveries: one message per protocol version, each encoded once for all its readers.
        var actions: [RouterAction] = []
    }

    /// Everyone online who reads `message`'s conversation: stored sessions (the sender's own included,
    /// so every device sees the whole conversation) get it through their window, which this extends;
    /// live-only sessions get it at once without a sequence number, except its sender (unless it wrote
    /// to itself). `storedSessionsOnly`: through the windows only (a message the store reports as a
    /// duplicate: live sessions have no sequence to tell a repeat by).
    static func plan(_ message: StoredMessage, users: inout [String: SessionTable.User], storedSessionsOnly: Bool) -> Plan {
        let readers: [String]
        switch message.conversation {
        case .room: readers = Array(users.keys)
        case .direct(let first, let second): readers = first == second ? [first] : [first, second]
        }
        let isDirect = message.conversation != .room
        var plan = Plan()
        var liveV1: [any ChatPeer] = []
        var liveV2: [any ChatPeer] = []
        for name in readers {
            guard let user = users[name] else { continue }
            if user.window != nil {
                users[name]?.window?.available(conversation: message.conversation.description, upTo: message.sequence)
                plan.windows.append(name)
            } else if !storedSessionsOnly, name != message.sender || (isDirect && readers.count == 1) {  // to oneself: reaches oneself
                plan.live.append(name)
                if user.version == .v1 { liveV1.append(user.session) } else { liveV2.append(user.session) }
            }
        }
        if !liveV1.isEmpty {
            plan.actions.append(.sendToAll(.delivery(from: message.sender, text: message.text, isDirect: isDirect), liveV1))
        }
        if !liveV2.isEmpty {
            plan.actions.append(
                .sendToAll(
                    .v2(
                        .delivery(
                            from: message.sender, text: message.text, isDirect: isDirect,
                            conversation: message.conversation.description, sequence: nil, time: message.time)), liveV2))
        }
        return plan
    }
}
