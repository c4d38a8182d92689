import Foundation

/// How much of each conversation a server keeps (`im-server` options; docs: README, "Retention").
/// Applied by ``MessageStore/applyRetention(_:now:)``, which the server runs from time to time; between
/// runs a conversation may hold more. Both limits may be set: a message goes when either says so.
/// Heads and positions are never lowered, so sequences are never reused.
public struct RetentionPolicy: Sendable, Equatable {
    /// Keep at most this many of the latest messages of each conversation (by sequence); nil: no limit.
    /// Never negative; 0 removes every message.
    public let maxMessagesPerConversation: Int?
    /// Remove messages whose time is more than this before the `now` retention is applied at (a message
    /// exactly this old is kept); nil: no limit. Never negative; compared in milliseconds.
    public let maxAge: Duration?

    /// A policy with these limits (default: none, keep everything).
    /// - Precondition: neither limit is negative.
    public init(maxMessagesPerConversation: Int? = nil, maxAge: Duration? = nil) {
        precondition((maxMessagesPerConversation ?? 0) >= 0, "maxMessagesPerConversation is negative")
        precondition((maxAge ?? .zero) >= .zero, "maxAge is negative")
        self.maxMessagesPerConversation = maxMessagesPerConversation
        self.maxAge = maxAge
    }

    /// Keeps everything.
    public static let keepEverything = RetentionPolicy()

    /// The time before which messages are too old at `now`, in milliseconds since 1970; nil without an
    /// age limit.
    func cutoffMilliseconds(now: Date) -> Int64? {
        guard let maxAge else { return nil }
        let (seconds, attoseconds) = maxAge.components
        let ageMilliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !ageMilliseconds.overflow else { return Int64.min }
        let age = ageMilliseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !age.overflow else { return Int64.min }
        let cutoff = now.millisecondsSince1970.subtractingReportingOverflow(age.partialValue)
        return cutoff.overflow ? Int64.min : cutoff.partialValue
    }
}
