import ChatProtocol

/// What one presence tick sends (Router+Presence has the rules): a service with no state and no
/// socket, from the tick's changes and the users online to the messages to send.
enum PresenceAnnouncer {
    /// The messages announcing `tick` (``PresenceBoard/takeTick(listed:legacy:)``) to `users`, with
    /// `onlineCount` users online now: changes that cancelled out to those who logged in between them,
    /// one `presenceChanges` to every session that asked for them (encoded once), and single `presence`
    /// messages (one per version) to the others that have not seen the change in their login reply.
    static func announce(_ tick: PresenceBoard.Tick, onlineCount: Int, to users: [SessionTable.User]) -> [RouterAction] {
        var actions = reverted(tick.reverted, onlineCount: onlineCount, to: users)
        guard !tick.online.isEmpty || !tick.offline.isEmpty else { return actions }
        var batched: [any ChatPeer] = []
        var single: [(session: any ChatPeer, version: ChatProtocolVersion, seen: UInt64)] = []
        for user in users {
            if user.presenceChanges {
                batched.append(user.session)
            } else {
                single.append((user.session, user.version, user.presenceSeen))
            }
        }
        if !batched.isEmpty {
            actions.append(
                .sendToAll(
                    .v2(
                        .presenceChanges(
                            online: tick.listedOnline, offline: tick.listedOffline, onlineCount: onlineCount,
                            unlisted: tick.unlisted)), batched))
        }
        for change in tick.legacy {
            let recipients = single.filter { $0.seen < change.event }
            let v1 = recipients.filter { $0.version == .v1 }.map(\.session)
            let v2 = recipients.filter { $0.version == .v2 }.map(\.session)
            if !v1.isEmpty { actions.append(.sendToAll(.presence(name: change.name, online: change.online), v1)) }
            if !v2.isEmpty { actions.append(.sendToAll(.v2(.presence(name: change.name, online: change.online)), v2)) }
        }
        return actions
    }

    /// Changes that cancelled out within a tick (a login and a logout, say) go to the sessions that
    /// logged in between them: their login reply showed the state in between. Batched sessions get one
    /// `presenceChanges` each, the others a `presence` per name.
    private static func reverted(
        _ reverted: [(name: String, online: Bool, firstEvent: UInt64, lastEvent: UInt64)], onlineCount: Int,
        to users: [SessionTable.User]
    ) -> [RouterAction] {
        guard !reverted.isEmpty else { return [] }
        var actions: [RouterAction] = []
        for user in users {
            let seen = user.presenceSeen
            let changes = reverted.filter { $0.firstEvent <= seen && seen < $0.lastEvent }
            guard !changes.isEmpty else { continue }
            if user.presenceChanges {
                actions.append(
                    .send(
                        .v2(
                            .presenceChanges(
                                online: changes.filter(\.online).map(\.name),
                                offline: changes.filter { !$0.online }.map(\.name),
                                onlineCount: onlineCount, unlisted: 0)), to: user.session))
            } else {
                for change in changes {
                    actions.append(
                        .send(
                            user.version == .v1
                                ? .presence(name: change.name, online: change.online)
                                : .v2(.presence(name: change.name, online: change.online)), to: user.session))
                }
            }
        }
        return actions
    }
}
