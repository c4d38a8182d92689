import AsyncSocket

extension LongLinkServer {
    /// The sessions of one event loop in the order of their last whole frame, oldest first, and one
    /// loop timer for all of them at the oldest one's deadline: a session is dropped for
    /// ``CloseReason/idleTimeout`` at its last frame plus ``Configuration/idleTimeout``, as with a timer of
    /// its own, without one (a timer costs three heap blocks, about 150 bytes, per session: issue 35 §2).
    ///
    /// A frame moves its session to the end (its deadline is now plus the timeout, and the loop's clock
    /// only moves forward, so the list stays ordered by deadline). The timer is set for the first
    /// session's deadline when none is set; when it fires it drops every session whose deadline has
    /// come, from the front, and is set again for the new first one. Loop thread only.
    final class IdleList: @unchecked Sendable {
        private let loop: EventLoop
        /// ``Configuration/idleTimeout`` in nanoseconds.
        private let timeout: UInt64
        /// The session with the oldest last frame.
        private var first: Session?
        private unowned(unsafe) var last: Session?
        /// Whether the loop timer is set (for the first session's deadline when it was set, or earlier).
        private var isTimerSet = false

        init(loop: EventLoop, timeout: UInt64) {
            self.loop = loop
            self.timeout = timeout
        }

        /// `session` had a whole frame (or opened) at `now`: it goes to the end, due at `now` + the timeout.
        func touch(_ session: Session, at now: UInt64) {
            session.idleLink.lastActivity = now
            if session.idleLink.isListed { unlink(session) }
            session.idleLink.isListed = true
            session.idleLink.previous = last
            if let last { last.idleLink.next = session } else { first = session }
            last = session
            if !isTimerSet { setTimer(for: now &+ timeout) }
        }

        /// `session` ended: it leaves the list (nothing when it is not on it).
        func remove(_ session: Session) {
            if session.idleLink.isListed { unlink(session) }
        }

        private func unlink(_ session: Session) {
            let next = session.idleLink.next
            let previous = session.idleLink.previous
            if let previous { previous.idleLink.next = next } else { first = next }
            if let next { next.idleLink.previous = previous } else { last = previous }
            session.idleLink = IdleLink(lastActivity: session.idleLink.lastActivity)
        }

        private func setTimer(for deadline: UInt64) {
            isTimerSet = true
            let now = loop.now()
            loop.scheduleTask(in: .nanoseconds(Int64(clamping: deadline > now ? deadline - now : 0))) { [self] in fire() }
        }

        private func fire() {
            isTimerSet = false
            let now = loop.now()
            while let session = first, now &- session.idleLink.lastActivity >= timeout {
                unlink(session)
                session.idleTimedOut()
            }
            if let first, !isTimerSet { setTimer(for: first.idleLink.lastActivity &+ timeout) }
        }
    }

    /// A session's place in its loop's ``IdleList`` (loop thread only).
    struct IdleLink {
        /// When the last whole frame arrived (loop clock, ns); the session's start until then.
        var lastActivity: UInt64 = 0
        /// The session after it (a later last frame); nil when last or not listed.
        var next: Session?
        unowned(unsafe) var previous: Session?
        var isListed = false
    }
}
