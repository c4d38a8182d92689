import AsyncSocket
import Foundation

/// Reliable delivery's part of the machine: answers, deliveries, pauses, and the flushes whose store
/// calls the driver makes off the loop.
extension LinkMachine {
    /// One message from the server on a reliable link: outbox answers, deliveries (passed on once, in
    /// order), anything else passed on.
    mutating func receivedReliably(_ message: Codec.Message, _ delivery: ReliableDelivery<Codec.Message>) {
        let incoming = delivery.classify(message)
        // Written once the app has handled this message's event (see takeFlush).
        if !delivery.flushScheduled, delivery.needsFlush {
            delivery.flushScheduled = true
            perform(.scheduleFlush)
        }
        switch incoming {
        case .other, .deliver:
            emit(.received(message))
        case .stored(let id, let sent):
            if configuration.reportsStoredAnswers { emit(.received(message)) }
            emit(.stored(id: id, sent))
            pumpOutbox()
            finishDrainIfDone()
        case .refused(let id, let sent):
            emit(.received(message))
            if let sent {
                emit(.refused(id: id, sent))
                pumpOutbox()
                finishDrainIfDone()
            }
        case .retry(let after):
            pauseOutbox(for: after)  // before the app hears of it: its clock may move at once
            emit(.received(message))
        case .drop:
            break
        case .gap(let conversation, let expected, let received):
            // Not passed on; the next login's positions make the server resend from the gap.
            drop(.deliveryGap(conversation: conversation, expected: expected, received: received))
        }
    }

    /// Sends nothing from the outbox for `delay` (at least; a later deadline asked for meanwhile wins),
    /// then every unanswered message again, from the oldest.
    private mutating func pauseOutbox(for delay: Duration) {
        guard let connection else { return }
        let deadline = now &+ delay.nanosecondsValue
        if let current = connection.retryDeadline, deadline <= current { return }
        modifyConnection { $0.retryDeadline = deadline }
        perform(.schedule(.retry, after: delay))
    }

    mutating func pauseEnded() {
        modifyConnection { $0.retryDeadline = nil }
        guard state.isConnected, let delivery else { return }
        delivery.resendUnanswered()
        pumpOutbox()
        finishDrainIfDone()
    }

    /// The end of the loop pass in which deliveries arrived: takes what is owed (one store update and at
    /// most one acknowledgement per conversation, however many deliveries arrived) and asks for it to
    /// be persisted.
    ///
    /// Nothing is persisted or acknowledged before the app has handled it: the driver makes the store
    /// call on its store queue after the events emitted before (a delivery's `.received` included) have
    /// reached the app; the acknowledgements follow on the loop. A position saved first was the app's
    /// loss when it was killed in between: a message acknowledged, never shown, and not sent again
    /// (chat-chaos recipient-kill, 299/300).
    mutating func takeFlush() {
        guard let delivery, delivery.flushScheduled || delivery.needsFlush else { return }
        perform(.persist(through: delivery.takeFlush(), then: .acknowledge))
    }

    /// Everything owed, persisted now (a drain's end, a stop), then `then`.
    mutating func flushDelivery(then: AfterPersist) {
        guard let delivery else { return }
        if delivery.needsFlush || delivery.flushScheduled { _ = delivery.takeFlush() }
        perform(.persist(through: delivery.flushesTaken, then: then))
    }

    /// A store call is done: counts its failures and writes the acknowledgements it allows (only on a
    /// connection this side is not ending; a later greeting carries the positions anyway).
    mutating func persisted(_ persisted: ReliableDelivery<Codec.Message>.Persisted, then: AfterPersist) {
        delivery?.noteStoreFailures(persisted.failures)
        guard then != .countFailures, let connection, connection.dropReason == nil else { return }
        for acknowledgement in persisted.acknowledgements { writeControl(acknowledgement) }
        if then == .closeAfterDrain { closeAfterDrain() }
    }

    // MARK: Smart heartbeat and network changes

    /// A change reported by the app (always acted on) or by the route source (acted on when the
    /// network identifier differs).
    mutating func networkMayHaveChanged(reportedByApp: Bool) {
        if let smart {
            let refreshed = smart.refreshNetwork()
            guard refreshed != nil || reportedByApp else { return }
            if let refreshed, refreshed.network != nil {
                report(refreshed)
            } else {
                emit(.networkChanged(from: smart.network, to: smart.network))
                if let change = refreshed?.interval { report(change) }
            }
        } else {
            emit(.networkChanged(from: nil, to: nil))
        }
        switch state {
        case .connected:
            drop(.networkChanged)
        case .connecting:
            stop()
            reconnectAtOnce()
        case .waitingToReconnect:
            reconnectAtOnce()
        case .idle, .unavailable:
            break
        }
    }

    /// A connection lost with the smart heartbeat on: a failure at the interval being tested when a
    /// heartbeat was unanswered, or when the server or the network ended a connection idle for longer
    /// than the minimum (a NAT or idle timeout that closes rather than black-holes).
    mutating func connectionLost(_ reason: LongLinkClient<Codec>.DisconnectReason, _ smart: SmartHeartbeatDriver) {
        defer { smart.probe = nil }
        switch reason {
        case .byServer, .network:
            let idle = now &- smart.lastTraffic
            guard smart.probe != nil || idle > smart.policy.minimum.nanosecondsValue else { return }
            report(smart.probeFailed(at: smart.probe ?? smart.interval))
        default:
            return
        }
    }

    mutating func report(_ refreshed: (network: (from: String?, to: String?)?, interval: SmartHeartbeatDriver.Change?)) {
        if let network = refreshed.network { emit(.networkChanged(from: network.from, to: network.to)) }
        if let change = refreshed.interval { report(change) }
    }

    mutating func report(_ outcome: (interval: Duration, change: SmartHeartbeatDriver.Change?), succeeded: Bool = false) {
        emit(.heartbeatProbe(interval: outcome.interval, succeeded: succeeded))
        if let change = outcome.change { report(change) }
    }

    private mutating func report(_ change: SmartHeartbeatDriver.Change) {
        emit(.heartbeatIntervalChanged(from: change.from, to: change.to, reason: change.reason))
    }
}
