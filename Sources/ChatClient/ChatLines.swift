import ChatProtocol
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The text of the chat client's lines for one user (`me`), in a terminal or a pipe
/// (``ChatClient/OutputStyle``); ``ClientOptions/help`` documents them. Every text that came from the
/// network goes through ``Swift/String/terminalSafe``. Pure: no state, any thread.
struct ChatLines: Sendable {
    let style: ChatClient.OutputStyle
    let me: String
    /// Terminal only: names in colour (``ANSIColor/forName(_:)``).
    let color: Bool
    /// Pipe only: every line starts with its UTC time in ISO 8601 (``stamped(_:at:entry:)``).
    let timestamps: Bool
    /// The time zone of the clock times shown in a terminal.
    let timeZone: TimeZone

    init(style: ChatClient.OutputStyle, me: String, color: Bool = false, timestamps: Bool = false, timeZone: TimeZone = .current) {
        self.style = style
        self.me = me
        self.color = color && style == .terminal
        self.timestamps = timestamps
        self.timeZone = timeZone
    }

    /// `line` as printed at `time`: in a terminal after the local clock time, `14:02 bob: hi` (not for
    /// an `entry` of a history, which shows its own date and time); in a pipe unchanged, or with
    /// ``timestamps`` after the UTC time to the millisecond, `2023-11-14T22:13:20.123Z bob: hi`.
    func stamped(_ line: String, at time: Date, entry: Bool = false) -> String {
        switch style {
        case .terminal: return entry ? line : "\(Self.clockTime(time, timeZone: timeZone, withSeconds: false)) \(line)"
        case .pipe: return timestamps ? "\(Self.iso8601(time)) \(line)" : line
        }
    }

    /// A name as shown: control characters escaped, and in a terminal with ``color`` in its colour.
    func shown(_ name: String) -> String {
        color ? ANSIColor.forName(name).wrap(name.terminalSafe) : name.terminalSafe
    }

    /// Version 1 (no ids, no outbox): own message sent: `→ bob: hi`, `→ everyone: hi all`; pipe:
    /// `sent to bob: hi`, `sent broadcast: hi all`. `nil` for other messages.
    func sent(_ message: ChatMessage) -> String? {
        switch (message, style) {
        case (.directMessage(let to, let text), .terminal): return "→ \(shown(to)): \(text.terminalSafe)"
        case (.broadcast(let text), .terminal): return "→ everyone: \(text.terminalSafe)"
        case (.directMessage(let to, let text), .pipe): return "sent to \(to.terminalSafe): \(text.terminalSafe)"
        case (.broadcast(let text), .pipe): return "sent broadcast: \(text.terminalSafe)"
        default: return nil
        }
    }

    /// Own message `id` accepted into the outbox: `#17 → bob: hi`, `#18 → everyone: hi all`; pipe:
    /// `accepted #17 to bob: hi`, `accepted #18 broadcast: hi all`. `nil` for other messages.
    func accepted(id: UInt64, _ message: ChatMessage) -> String? {
        switch (message, style) {
        case (.directMessage(let to, let text), .terminal), (.v2(.directMessage(_, let to, let text)), .terminal):
            return "#\(id) → \(shown(to)): \(text.terminalSafe)"
        case (.broadcast(let text), .terminal), (.v2(.broadcast(_, let text)), .terminal):
            return "#\(id) → everyone: \(text.terminalSafe)"
        case (.directMessage(let to, let text), .pipe), (.v2(.directMessage(_, let to, let text)), .pipe):
            return "accepted #\(id) to \(to.terminalSafe): \(text.terminalSafe)"
        case (.broadcast(let text), .pipe), (.v2(.broadcast(_, let text)), .pipe):
            return "accepted #\(id) broadcast: \(text.terminalSafe)"
        default:
            return nil
        }
    }

    /// Message `id` stored (`live`: passed to those online, not stored): `✓ #17 stored`,
    /// `✓ #17 passed on (live only)`; pipe: `stored #17`, `passed #17`.
    func stored(id: UInt64, live: Bool) -> String {
        switch style {
        case .terminal: return live ? "✓ #\(id) passed on (live only)" : "✓ #\(id) stored"
        case .pipe: return live ? "passed #\(id)" : "stored #\(id)"
        }
    }

    /// `by`'s client has received message `id`: `✓✓ #17 received by bob`; pipe: `received #17 by bob`.
    func receipt(id: UInt64, by: String) -> String {
        switch style {
        case .terminal: return "✓✓ #\(id) received by \(shown(by))"
        case .pipe: return "received #\(id) by \(by.terminalSafe)"
        }
    }

    /// Message `id` refused for good (the error line comes first): `✗ #17 refused`; pipe: `refused #17`.
    func refused(id: UInt64) -> String {
        style == .terminal ? "✗ #\(id) refused" : "refused #\(id)"
    }

    /// A delivery. From someone else, or to myself: `bob (direct): hi`, `bob: hi all`. My own, sent
    /// from another client: `you (another device) → bob: hi`, `you (another device): hi all`; pipe:
    /// `you to bob: hi`, `you broadcast: hi all`.
    func delivery(from: String, text: String, isDirect: Bool, conversation: String?) -> String {
        let text = text.terminalSafe
        if from == me, let conversation {
            switch ConversationID(conversation) {
            case .direct(let first, let second)? where !(first == me && second == me):
                let other = first == me ? second : first
                return style == .terminal ? "you (another device) → \(shown(other)): \(text)" : "you to \(shown(other)): \(text)"
            case .room?:
                return style == .terminal ? "you (another device): \(text)" : "you broadcast: \(text)"
            default:
                break
            }
        }
        return isDirect ? "\(shown(from)) (direct): \(text)" : "\(shown(from)): \(text)"
    }

    /// An error from the server; `id` names the message it answers: `! unknownRecipient for #17: …`.
    func error(code: ChatErrorCode, detail: String, id: UInt64?) -> String {
        "! \(code.rawValue)\(id.map { " for #\($0)" } ?? ""): \(detail.terminalSafe)"
    }

    /// A history: a heading, then one line per message, oldest first. Terminal: `* history with bob,
    /// 2 messages:` (`* history of the room, …`) and `  #5 2023-11-14 22:13 bob: hi` (local time);
    /// pipe: `history direct:ann bob: 2 messages` and `history direct:ann bob #5 1700000000123 bob: hi`
    /// (milliseconds since 1970).
    func history(conversation: String, messages: [ChatHistoryEntry]) -> [String] {
        let safe = conversation.terminalSafe
        let count = messages.count == 1 ? "1 message" : "\(messages.count) messages"
        switch style {
        case .terminal:
            let what: String
            switch ConversationID(conversation) {
            case .room?: what = "of the room"
            case .direct(let first, let second)?: what = "with \(shown(first == me ? second : first))"
            case nil: what = "of \(safe)"
            }
            return ["* history \(what), \(count)\(messages.isEmpty ? "" : ":")"]
                + messages.map { entry in
                    "  #\(entry.sequence) \(Self.localTime(entry.time, withDate: true, timeZone: timeZone)) \(shown(entry.from)): \(entry.text.terminalSafe)"
                }
        case .pipe:
            return ["history \(safe): \(count)"]
                + messages.map { entry in
                    let milliseconds = (entry.time.timeIntervalSince1970 * 1000).rounded()
                    return
                        "history \(safe) #\(entry.sequence) \(Int64(milliseconds)) \(entry.from.terminalSafe): \(entry.text.terminalSafe)"
                }
        }
    }

    /// `* reconnect attempt 4 in 8.318 s`, and in a terminal ` (at 14:02:11)`: the attempt's clock
    /// time, `now` plus `delay`.
    func reconnecting(_ description: String, delay: Duration, now: Date) -> String {
        guard style == .terminal else { return "* \(description)" }
        let (seconds, attoseconds) = delay.components
        let at = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        return "* \(description) (at \(Self.clockTime(at, timeZone: timeZone, withSeconds: true)))"
    }

    /// `time` in `timeZone` (default: the local one): `14:02:11`, or with the date `2023-11-14 22:13`.
    static func localTime(_ time: Date, withDate: Bool, timeZone: TimeZone = .current) -> String {
        guard withDate else { return clockTime(time, timeZone: timeZone, withSeconds: true) }
        let parts = brokenDown(time, offset: timeZone.secondsFromGMT(for: time))
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
    }

    /// `time` in `timeZone` as a clock time: `14:02`, or `withSeconds` `14:02:11` (seconds rounded down).
    static func clockTime(_ time: Date, timeZone: TimeZone, withSeconds: Bool) -> String {
        let parts = brokenDown(time, offset: timeZone.secondsFromGMT(for: time))
        let minutes = "\(two(parts.tm_hour)):\(two(parts.tm_min))"
        return withSeconds ? "\(minutes):\(two(parts.tm_sec))" : minutes
    }

    /// `time` in UTC, ISO 8601 to the millisecond (rounded down): `2023-11-14T22:13:20.123Z`.
    static func iso8601(_ time: Date) -> String {
        let milliseconds = Int64((time.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = milliseconds - seconds * 1000
        let parts = brokenDown(Date(timeIntervalSince1970: Double(seconds)), offset: 0)
        let millis = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millis)Z"
    }

    /// The calendar fields of `time` shifted by `offset` seconds, as gmtime_r(3) gives them.
    private static func brokenDown(_ time: Date, offset: Int) -> tm {
        var seconds = time_t(time.timeIntervalSince1970.rounded(.down)) + time_t(offset)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

extension String {
    /// The text with control characters (C0, DEL, C1: escape sequences, carriage returns, newlines, bells)
    /// shown as `\u{1B}` and the like, so text from the network cannot move the cursor, recolour the
    /// terminal or forge extra lines.
    package var terminalSafe: String {
        guard unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            if scalar.properties.generalCategory == .control {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
