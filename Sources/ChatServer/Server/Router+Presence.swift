import ChatProtocol
import Dispatch
import LongLink

/// Presence that scales (issue 12): logins and logouts are gathered for one presence tick
/// (``ChatServer/defaultPresenceInterval``, 200 ms) and then announced once:
///
/// - to sessions that asked for it (version 2 login with `presenceChanges`), one `presenceChanges`
///   frame per tick, encoded once and sent to all of them: the net changes (a login and a logout of one
///   name within the tick cancel out), sorted, at most ``ChatCodec/maxPresenceListed`` names, the rest
///   counted in `unlisted`;
/// - to the others (version 1, version 2 without the key), single `presence` frames as before, for the
///   first ``maxPresencePerTick`` changed names in code-point order; changes beyond those in a crowded
///   tick are not announced to them (they see them in their next login reply). A change a session's
///   login reply already reflected (its own login included) is not announced to it.
///
/// So 2,000 users logging in together cost each opted-in session one frame per tick, and each other
/// session at most 20 per tick, instead of 1,999 each. `who` pages through the sorted roster.
extension Router {
    /// Most single `presence` messages a session without `presenceChanges` gets per tick: 20.
    static let maxPresencePerTick = 20

    /// Records that `name` came online or went; the others hear of it at the next presence tick, which
    /// this schedules (on the routing queue) unless one is scheduled already.
    func sendPresence(of name: String, online: Bool) {
        if online { presence.loggedIn(name) } else { presence.loggedOut(name) }
        guard let interval = presenceInterval, !presenceTickScheduled else { return }
        presenceTickScheduled = true
        queue.asyncAfter(deadline: .now() + Router.dispatchInterval(interval)) { [self] in
            presenceTickScheduled = false
            presenceTick()
        }
    }

    /// Announces the changes since the last tick (see the type's documentation) and starts the next
    /// tick. Nothing is sent when nothing changed, or when every change cancelled out.
    func presenceTick() {
        guard presence.hasChanges else { return }
        let tick = presence.takeTick(listed: ChatCodec.maxPresenceListed, legacy: Router.maxPresencePerTick)
        if !tick.reverted.isEmpty { sendReverted(tick.reverted) }
        guard !tick.online.isEmpty || !tick.offline.isEmpty else { return }
        var batched: [Session] = []
        var single: [(session: Session, version: ChatProtocolVersion, seen: UInt64)] = []
        for user in users.values {
            if user.presenceChanges {
                batched.append(user.session)
            } else {
                single.append((user.session, user.version, user.presenceSeen))
            }
        }
        if !batched.isEmpty {
            link?.send(
                .v2(
                    .presenceChanges(
                        online: tick.listedOnline, offline: tick.listedOffline, onlineCount: presence.count,
                        unlisted: tick.unlisted)), to: batched)
        }
        for change in tick.legacy {
            let recipients = single.filter { $0.seen < change.event }
            let v1 = recipients.filter { $0.version == .v1 }.map(\.session)
            let v2 = recipients.filter { $0.version == .v2 }.map(\.session)
            if !v1.isEmpty { link?.send(.presence(name: change.name, online: change.online), to: v1) }
            if !v2.isEmpty { link?.send(.v2(.presence(name: change.name, online: change.online)), to: v2) }
        }
    }

    /// Answers a `who`: the names online after `after`, at most `limit`, from the sorted roster.
    func answerWho(after: String?, limit: Int, session: Session) {
        let page = presence.page(after: after, limit: limit)
        session.send(.v2(.onlineUsers(names: page.names, onlineCount: presence.count, more: page.more)))
    }

    /// `duration` for `DispatchQueue.asyncAfter`, in whole nanoseconds (negative: zero).
    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }

    /// Changes that cancelled out within a tick (a login and a logout, say) go to the sessions that
    /// logged in between them: their login reply showed the state in between. Batched sessions get one
    /// `presenceChanges` each, the others a `presence` per name.
    private func sendReverted(_ reverted: [(name: String, online: Bool, firstEvent: UInt64, lastEvent: UInt64)]) {
        for user in users.values {
            let seen = user.presenceSeen
            let changes = reverted.filter { $0.firstEvent <= seen && seen < $0.lastEvent }
            guard !changes.isEmpty else { continue }
            if user.presenceChanges {
                user.session.send(
                    .v2(
                        .presenceChanges(
                            online: changes.filter(\.online).map(\.name),
                            offline: changes.filter { !$0.online }.map(\.name),
                            onlineCount: presence.count, unlisted: 0)))
            } else {
                for change in changes {
                    user.session.send(
                        user.version == .v1
                            ? .presence(name: change.name, online: change.online)
                            : .v2(.presence(name: change.name, online: change.online)))
                }
            }
        }
    }
}
