import AsyncSocket
import ChatProtocol
import Foundation
import LongLink

/// When and how the session ends; the words the lines share.
extension ChatPresenter {
    // MARK: Ending

    /// A message was stored or refused: the wait starts over, and the session may be done.
    func progressed() {
        guard session.inputHasEnded else { return }
        restartWaitTimer()
        finishIfDone()
    }

    /// Version 2, input ended: once logged in and the outbox is empty, close after the last answers.
    /// Until the login is answered the session waits (a refused login ends it with its own status; no
    /// login within ``ChatClient/Configuration/wait`` ends it as ``ChatClient/ExitStatus/serverUnavailable``).
    func finishIfDone() {
        guard settings.version == .v2, session.inputHasEnded, session.loggedIn, !session.draining, !session.finished, outboxCount() == 0
        else { return }
        session.draining = true
        link?.disconnectAfterSending()
    }

    func restartWaitTimer() {
        session.waitTimer?.cancel()
        session.waitTimer = settings.loop.scheduleTask(in: settings.wait) { [self] in
            queue.async { self.waitExpired() }
        }
    }

    func waitExpired() {
        guard !session.finished else { return }
        session.waitTimer = nil
        let left = outboxCount()
        if settings.version == .v2 && left == 0 && session.loggedIn {
            link?.disconnect()
            finish(.quit)
            return
        }
        let what = session.connected ? "no answer from the server" : "server unreachable"
        if settings.version == .v2 && left == 0 {
            say("! \(session.connected ? "not logged in" : "server unreachable") after \(Self.seconds(settings.wait)) s; leaving")
        } else if settings.version == .v2 {
            say("! \(what) for \(Self.seconds(settings.wait)) s: \(Self.messages(left)) still in the outbox, kept for the next start")
        } else {
            say("! \(what) for \(Self.seconds(settings.wait)) s; leaving")
        }
        link?.disconnect()
        finish(.serverUnavailable)
    }

    func reportOutboxLeft() {
        let left = outboxCount()
        if left > 0 { say("! \(Self.messages(left)) still in the outbox, kept for the next start") }
    }

    func outboxCount() -> Int { link?.deliveryStatus?.outboxCount ?? 0 }

    /// Ends the session with `status`; a clean end after a failure is ``ChatClient/ExitStatus/completedWithErrors``.
    func finish(_ status: ChatClient.ExitStatus) {
        guard !session.finished else { return }
        updateStatus { $0.connection = .offline }
        session.finished = true
        session.waitTimer?.cancel()
        session.waitTimer = nil
        settings.onFinish(status == .quit && failed ? .completedWithErrors : status)
        afterFinish?()
    }

    // MARK: Text

    /// "1 message", "3 messages".
    static func messages(_ count: Int) -> String { count == 1 ? "1 message" : "\(count) messages" }

    /// Whole seconds when whole ("30"), else to the millisecond ("0.5").
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    /// `duration` in seconds, for dates.
    static func interval(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whether an error with `code` counts as a failure for the exit status (4): a message refused for
    /// good (``ChatErrorCode/refusesForGood``), a command the server could not do
    /// (`historyUnavailable`, `alreadyLoggedIn`) and a frame it could not read (`protocolError`). Not
    /// the login's refusals, which end the session with a status of their own (`nameTaken`,
    /// `invalidName`, `badPassword`), nor any answer the client rides out: it reconnects, waits or
    /// resends, and the message stays in the outbox until stored (`throttled`, `storeUnavailable`,
    /// `replaced`, `notLoggedIn`, `serverFull`, `serverBusy`, `rateLimited`, `loginTimeout`, `frameTimeout`,
    /// `serverShuttingDown`). An outage the client came through is no failure of the user's messages.
    static func isFailure(_ code: ChatErrorCode) -> Bool {
        switch code {
        case .unknownRecipient, .badRequest, .messageTooLong, .historyUnavailable, .alreadyLoggedIn, .protocolError:
            return true
        case .nameTaken, .invalidName, .badPassword, .throttled, .storeUnavailable, .replaced, .notLoggedIn, .serverFull,
            .serverBusy, .rateLimited, .loginTimeout, .frameTimeout, .serverShuttingDown:
            return false
        }
    }

    /// "bob, cy and 3 more", or "nobody else" (names as ``ChatLines/shown(_:)`` shows them).
    func list(_ online: [String], _ count: Int) -> String {
        var list = online.isEmpty ? "nobody else" : online.map(lines.shown).joined(separator: ", ")
        if count > online.count { list += " and \(count - online.count) more" }
        return list
    }
}
