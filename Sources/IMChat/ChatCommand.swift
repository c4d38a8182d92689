/// One line typed into the chat client.
public enum ChatCommand: Equatable, Sendable {
    /// `/to NAME text`: a direct message.
    case direct(to: String, text: String)
    /// Any line not starting with `/`: a message to everyone.
    case broadcast(text: String)
    /// `/quit`: send what is queued, then leave.
    case quit
    /// A blank line.
    case nothing
    /// A command that cannot be understood; carries the help text to print.
    case invalid(help: String)

    /// The commands, for help output.
    public static let help = "commands: /to NAME text (direct message), /quit; any other line goes to everyone"

    /// Parses `line` (without its line ending). Leading and trailing whitespace is ignored.
    public static func parse(_ line: String) -> ChatCommand {
        let trimmed = line.trimmingWhitespace()
        guard !trimmed.isEmpty else { return .nothing }
        guard trimmed.hasPrefix("/") else { return .broadcast(text: trimmed) }
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        switch parts[0] {
        case "/quit" where parts.count == 1:
            return .quit
        case "/to" where parts.count == 3:
            return .direct(to: String(parts[1]), text: String(parts[2]).trimmingWhitespace())
        case "/to":
            return .invalid(help: "usage: /to NAME text")
        default:
            return .invalid(help: "unknown command \(parts[0]); \(help)")
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
