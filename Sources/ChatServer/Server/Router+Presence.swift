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

    /// Who is online, and when changes are announced.
    struct PresenceState {
        /// Who is online (sorted) and who came or went since the last presence tick.
        var board = PresenceBoard()
        /// How long changes are gathered before they are announced; nil: only when ``presenceTick()``
        /// is called (tests). Set by ``ChatServer`` before it starts.
        var interval: Duration? = ChatServer.defaultPresenceInterval
        var tickScheduled = false
    }

    /// Records that `name` came online or went; the others hear of it at the next presence tick, which
    /// this schedules (on the routing queue) unless one is scheduled already.
    func sendPresence(of name: String, online: Bool) {
        if online { presence.board.loggedIn(name) } else { presence.board.loggedOut(name) }
        guard let interval = presence.interval, !presence.tickScheduled else { return }
        presence.tickScheduled = true
        queue.asyncAfter(deadline: .now() + Router.dispatchInterval(interval)) { [self] in
            presence.tickScheduled = false
            presenceTick()
        }
    }

    /// Announces the changes since the last tick (``PresenceAnnouncer``) and starts the next tick.
    /// Nothing is sent when nothing changed, or when every change cancelled out.
    func presenceTick() {
        assertOnQueue()
        guard presence.board.hasChanges else { return }
        let tick = presence.board.takeTick(listed: ChatCodec.maxPresenceListed, legacy: Router.maxPresencePerTick)
        let actions = PresenceAnnouncer.announce(tick, onlineCount: presence.board.count, to: Array(users.values))
        for action in actions {
            switch action {
            case .send: metrics.presenceMessagesSent.increment()
            case .sendToAll(_, let peers): metrics.presenceMessagesSent.increment(by: UInt64(peers.count))
            }
        }
        perform(actions)
    }

    /// Answers a `who`: the names online after `after`, at most `limit`, from the sorted roster.
    func answerWho(after: String?, limit: Int, session: Session) {
        let page = presence.board.page(after: after, limit: limit)
        session.send(.v2(.onlineUsers(names: page.names, onlineCount: presence.board.count, more: page.more)))
    }

    /// `duration` for `DispatchQueue.asyncAfter`, in whole nanoseconds (negative: zero).
    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }
}
