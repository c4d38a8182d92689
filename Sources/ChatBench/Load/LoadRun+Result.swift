import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketBench

/// The result of a run, taken on the loop thread.
extension LoadRun {
    /// Lines for the first `limit` messages whose deliveries are not all in (``LoadResult/undelivered``).
    func undeliveredMessages(limit: Int) -> [String] {
        var lines: [String] = []
        for (offset, sent) in ledger.messages.enumerated() where sent.delivered < sent.expected && lines.count < limit {
            let sender = roster.connections[Int(sent.sender)].name
            var line = "#\(offset + 1) \(sender) → "
            if sent.recipient >= 0 {
                let recipient = roster.connections[Int(sent.recipient)].name
                let conversation = ConversationID(between: sender, and: recipient).description
                line += "\(recipient) (\(conversation), recipient at \(positions[Int(sent.recipient)].positions[conversation] ?? 0))"
            } else {
                line += "room"
            }
            line += " \(sent.delivered)/\(sent.expected) delivered, \(sent.isAcknowledged ? "acknowledged" : "not acknowledged")"
            lines.append(line)
        }
        return lines
    }

    func makeResult() -> LoadResult {
        phase.isFinished = true
        var result = self.result
        result.failover.usersAway = failover.droppedAt.count
        result.heartbeats.heartbeatsLost = roster.connections.reduce(0) { $0 + $1.heartbeatsLost }
        result.failover.messagesResent = roster.connections.reduce(0) { $0 + $1.messagesResent }
        result.failover.storeRefusals = roster.connections.reduce(0) { $0 + $1.storeRefusals }
        result.logins.loggedIn = failover.loggedInOnce.filter { $0 < options.users }.count
        result.traffic.probeDelivered = ledger.messages.reduce(0) { $0 + ($1.kind == .probe ? Int($1.delivered) : 0) }
        result.deliveries.expected = ledger.expected
        result.deliveries.delivered = ledger.delivered
        result.deliveries.duplicates = ledger.duplicates
        result.deliveries.outOfOrder = ledger.outOfOrder
        result.deliveries.misdelivered = ledger.misdelivered
        result.deliveries.unknownIDs = ledger.unknown
        result.deliveries.refused = ledger.refused
        result.deliveries.echoes = ledger.echoes
        result.deliveries.undelivered = undeliveredMessages(limit: 10)
        result.answers.acknowledged = ledger.acknowledged
        result.answers.acknowledgementErrors = ledger.acknowledgementErrors
        result.answers.unacknowledged = options.version == .v2 ? max(0, counts.numberedSent - ledger.acknowledged - ledger.refused) : 0
        result.heartbeats.heartbeatsSent = roster.connections.reduce(0) { $0 + $1.heartbeatsSent }
        result.heartbeats.heartbeatsAnswered = roster.connections.reduce(0) { $0 + $1.heartbeatsAnswered }
        // On connections still up, late and unanswered ones count as missed too; those of a connection
        // that dropped were lost with it (ChatConnection.heartbeatsLost).
        result.heartbeats.heartbeatsMissed = roster.connections.reduce(0) {
            $0 + $1.heartbeatsMissed + ($1.isLoggedIn ? $1.heartbeatsLate + $1.heartbeatsSent - $1.heartbeatsAnswered : 0)
        }
        if times.lastDelivery > times.trafficStart, times.trafficStart > 0 {
            result.latencies.deliverySeconds = Double(times.lastDelivery - times.trafficStart) / 1e9
        }
        if times.lastBroadcastDelivery > times.trafficStart, times.trafficStart > 0 {
            result.latencies.broadcastSeconds = Double(times.lastBroadcastDelivery - times.trafficStart) / 1e9
        }
        result.drained = isComplete
        return result
    }
}
