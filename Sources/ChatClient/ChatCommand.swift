import ChatProtocol

/// One line typed into the chat client.
public enum ChatCommand: Equatable, Sendable {
    /// `/to NAME text`: a direct message.
    case direct(to: String, text: String)
    /// Any line not starting with `/`: a message to everyone.
    case broadcast(text: String)
    /// `/history NAME [N]`: the last `limit` messages with user `with`; `/history [N]` (`with` nil):
    /// of the room. `limit` 1 to ``ChatCodec/maxHistoryLimit`` (100), default ``defaultHistoryLimit``.
    case history(with: String?, limit: Int)
    /// `/who`: the first page of the users online (``ChatCodec/maxWhoLimit`` names); `/who more`
    /// (`more` true): the page after the last one shown.
    case who(more: Bool)
    /// `/help`: list the commands (``help``).
    case listCommands
    /// `/quit`: send what is queued, then leave.
    case quit
    /// A blank line.
    case nothing
    /// A command that cannot be understood; carries the help text to print.
    case invalid(help: String)

    /// The commands, for help output (one line).
    public static let help =
        "commands: /to NAME text (direct message), /history [NAME] [N] (the last N messages "
        + "with NAME, or of the room; default 20, at most 100; protocol 2), /who [more] (who is online, 100 at a time; "
        + "protocol 2), /help, /quit (leave once what you sent is stored); any other line goes to everyone"

    /// How many messages `/history` shows when not told: 20.
    public static let defaultHistoryLimit = 20

    /// The usage line of `/history`.
    static let historyUsage = "usage: /history [NAME] [N] (N from 1 to \(ChatCodec.maxHistoryLimit), default 20)"

    /// Parses `line` (without its line ending). Leading and trailing whitespace is ignored.
    public static func parse(_ line: String) -> ChatCommand {
        let trimmed = line.trimmingWhitespace()
        guard !trimmed.isEmpty else { return .nothing }
        guard trimmed.hasPrefix("/") else { return .broadcast(text: trimmed) }
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        switch parts[0] {
        case "/quit" where parts.count == 1:
            return .quit
        case "/help" where parts.count == 1:
            return .listCommands
        case "/who" where parts.count == 1:
            return .who(more: false)
        case "/who" where parts.count == 2 && parts[1] == "more":
            return .who(more: true)
        case "/who":
            return .invalid(help: "usage: /who [more]")
        case "/history":
            return history(trimmed.split(separator: " ", omittingEmptySubsequences: true).dropFirst().map(String.init))
        case "/to" where parts.count == 3:
            return .direct(to: String(parts[1]), text: String(parts[2]).trimmingWhitespace())
        case "/to":
            return .invalid(help: "usage: /to NAME text")
        default:
            return .invalid(help: "unknown command \(parts[0]); \(help)")
        }
    }
}

extension ChatCommand {
    /// `/history`'s arguments: none, `N`, `NAME` or `NAME N`; a lone number is a count (for a user
    /// whose name is a number, give the count too).
    private static func history(_ arguments: [String]) -> ChatCommand {
        func limit(_ text: String) -> Int? {
            guard let limit = Int(text), (1...ChatCodec.maxHistoryLimit).contains(limit) else { return nil }
            return limit
        }
        switch arguments.count {
        case 0:
            return .history(with: nil, limit: defaultHistoryLimit)
        case 1 where arguments[0].allSatisfy({ $0.isASCII && $0.isNumber }):
            guard let count = limit(arguments[0]) else { return .invalid(help: historyUsage) }
            return .history(with: nil, limit: count)
        case 1:
            return .history(with: arguments[0], limit: defaultHistoryLimit)
        case 2:
            guard let count = limit(arguments[1]) else { return .invalid(help: historyUsage) }
            return .history(with: arguments[0], limit: count)
        default:
            return .invalid(help: historyUsage)
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
