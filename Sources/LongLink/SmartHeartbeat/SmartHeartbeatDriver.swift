import Foundation
import SocketLog

/// A link's smart heartbeat state (``SmartHeartbeat``), confined to the link's event loop: the network
/// in use, what is learned about it, when the link last carried traffic, and the heartbeat awaiting
/// its answer.
final class SmartHeartbeatDriver {
    /// A change of interval to report.
    struct Change: Equatable {
        var from: Duration
        var to: Duration
        var reason: SmartHeartbeat.ChangeReason
    }

    let policy: SmartHeartbeat
    private let logger: Logger
    /// The network identifier in use (`nil`: unknown), once ``refreshNetwork()`` has run.
    private(set) var network: String?
    private var hasNetwork = false
    /// What is learned about ``network``; `nil` for an unknown network (beats at the minimum).
    private var learner: HeartbeatLearner?
    /// Loop time (ns) of the last message written or read on the current connection.
    var lastTraffic: UInt64 = 0
    /// The interval the unanswered heartbeat tests, while one is unanswered.
    var probe: Duration?

    init(policy: SmartHeartbeat, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    /// The interval heartbeats use now.
    var interval: Duration { learner?.interval ?? policy.minimum }

    /// Re-derives the network identifier. When it differs from the one in use (or on the first
    /// call), loads that network's learned interval; returns the change of network (`nil` on the
    /// first call) and of interval, or `nil` when the network is the same.
    func refreshNetwork() -> (network: (from: String?, to: String?)?, interval: Change?)? {
        let now = policy.networkIdentifier()
        guard !hasNetwork || now != network else { return nil }
        let previous = hasNetwork ? (from: network, to: now) : nil
        let before = interval
        hasNetwork = true
        network = now
        learner = now.map { id in
            var learned: LearnedHeartbeat?
            do {
                learned = try policy.store.learned(forNetwork: id)
            } catch {
                logger.warning("heartbeat store unreadable for network \(id): \(error); starting afresh")
            }
            return HeartbeatLearner(policy: policy, learned: learned)
        }
        let change = interval == before ? nil : Change(from: before, to: interval, reason: .loadedForNetwork)
        return (previous, change)
    }

    /// The unanswered heartbeat was answered: returns the interval it tested and the change it made.
    func probeAnswered() -> (interval: Duration, change: Change?)? {
        guard let probe else { return nil }
        self.probe = nil
        return (probe, learn { $0.succeeded(at: probe) })
    }

    /// The heartbeat testing `interval` (the unanswered one, or the next one due) failed: returns the
    /// interval and the change it made.
    func probeFailed(at interval: Duration) -> (interval: Duration, change: Change?) {
        probe = nil
        return (interval, learn { $0.failed(at: interval) })
    }

    private func learn(
        _ outcome: (inout HeartbeatLearner) -> (from: Duration, reason: SmartHeartbeat.ChangeReason)?
    ) -> Change? {
        guard var learner, let network else { return nil }
        let before = learner.learned
        let change = outcome(&learner).map { Change(from: $0.from, to: learner.interval, reason: $0.reason) }
        self.learner = learner
        guard learner.learned != before else { return change }
        var learned = learner.learned
        learned.modified = Date()
        do {
            try policy.store.save(learned, forNetwork: network)
        } catch {
            logger.warning("heartbeat store not written for network \(network): \(error)")
        }
        return change
    }
}
