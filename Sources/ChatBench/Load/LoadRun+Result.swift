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
        result.usersAway = failover.droppedAt.count
        result.heartbeatsLost = roster.connections.reduce(0) { $0 + $1.heartbeatsLost }
        result.messagesResent = roster.connections.reduce(0) { $0 + $1.messagesResent }
        result.storeRefusals = roster.connections.reduce(0) { $0 + $1.storeRefusals }
        result.loggedIn = failover.loggedInOnce.filter { $0 < options.users }.count
        result.probeDelivered = ledger.messages.reduce(0) { $0 + ($1.kind == .probe ? Int($1.delivered) : 0) }
        result.expected = ledger.expected
        result.delivered = ledger.delivered
        result.duplicates = ledger.duplicates
        result.outOfOrder = ledger.outOfOrder
        result.misdelivered = ledger.misdelivered
        result.unknownIDs = ledger.unknown
        result.refused = ledger.refused
        result.echoes = ledger.echoes
        result.undelivered = undeliveredMessages(limit: 10)
        result.acknowledged = ledger.acknowledged
        result.acknowledgementErrors = ledger.acknowledgementErrors
        result.unacknowledged = options.version == .v2 ? max(0, counts.numberedSent - ledger.acknowledged - ledger.refused) : 0
        result.heartbeatsSent = roster.connections.reduce(0) { $0 + $1.heartbeatsSent }
        result.heartbeatsAnswered = roster.connections.reduce(0) { $0 + $1.heartbeatsAnswered }
        // On connections still up, late and unanswered ones count as missed too; those of a connection
        // that dropped were lost with it (ChatConnection.heartbeatsLost).
        result.heartbeatsMissed = roster.connections.reduce(0) {
            $0 + $1.heartbeatsMissed + ($1.isLoggedIn ? $1.heartbeatsLate + $1.heartbeatsSent - $1.heartbeatsAnswered : 0)
        }
        if times.lastDelivery > times.trafficStart, times.trafficStart > 0 {
            result.deliverySeconds = Double(times.lastDelivery - times.trafficStart) / 1e9
        }
        if times.lastBroadcastDelivery > times.trafficStart, times.trafficStart > 0 {
            result.broadcastSeconds = Double(times.lastBroadcastDelivery - times.trafficStart) / 1e9
        }
        result.drained = isComplete
        return result
    }
}
