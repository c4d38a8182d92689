import AsyncSocket
import Dispatch
import Foundation
import LongLink

/// The instant-messaging client behind `im-client`: logs in by name, turns typed lines
/// (``ChatCommand``) into messages, and turns everything that happens (messages, presence, drops,
/// reconnect attempts and their outcomes) into lines of text for a terminal or a script.
///
/// Output lines go to `output` and the end of the session to `onFinish`, both on the client's own
/// serial queue. Exit statuses: 0 after a clean quit, 1 when the server is unavailable, 2 when the
/// server refused the login.
public final class ChatClient: Sendable {
    /// Why the session ended, as a process exit status.
    public enum ExitStatus: Int32, Sendable {
        case quit = 0
        case serverUnavailable = 1
        case loginRefused = 2
    }

    private let queue = DispatchQueue(label: "IMChat.ChatClient")
    private let link: LongLinkClient<ChatCodec>
    private let presenter: Presenter
    private let inputEnded = LockedValue(false)

    /// A client for `name` that will connect to `host`:`port` and send a heartbeat every `heartbeat`.
    public init(
        name: String,
        host: String,
        port: UInt16,
        heartbeat: Duration = .seconds(180),
        reconnectDelays: [Duration] = ReconnectSchedule.articleDelays,
        group: EventLoopGroup = .shared,
        output: @escaping @Sendable (String) -> Void,
        onFinish: @escaping @Sendable (ExitStatus) -> Void
    ) {
        var configuration = LongLinkClient<ChatCodec>.Configuration(host: host, port: port)
        configuration.heartbeatInterval = heartbeat
        configuration.reconnectDelays = reconnectDelays
        let presenter = Presenter(name: name, output: output, onFinish: onFinish)
        self.presenter = presenter
        link = LongLinkClient(codec: ChatCodec(), configuration: configuration, group: group, eventQueue: queue) { event in
            presenter.handle(event)
        }
        presenter.link = link
        link.greeting = .login(name: name, resumeToken: nil)
    }

    /// Connects and logs in; reconnects by itself after drops.
    public func start() { link.connect() }

    /// Acts on one typed line. Lines after `/quit` or ``finishInput()`` are ignored.
    public func handle(line: String) {
        guard !inputEnded.withLock({ $0 }) else { return }
        switch ChatCommand.parse(line) {
        case .direct(let to, let text): link.send(.directMessage(to: to, text: text))
        case .broadcast(let text): link.send(.broadcast(text: text))
        case .quit: finishInput()
        case .nothing: break
        case .invalid(let help): queue.async { [presenter] in presenter.output(help) }
        }
    }

    /// The input has ended: send what is queued, wait briefly for the server's replies to it (errors
    /// included), then disconnect cleanly.
    public func finishInput() {
        let first = inputEnded.withLock { ended in
            defer { ended = true }
            return !ended
        }
        if first { link.disconnectAfterSending() }
    }
}

/// Turns link events into lines. Unchecked: used on the client's queue only (`link` is set once,
/// before the first event).
private final class Presenter: @unchecked Sendable {
    let name: String
    let output: @Sendable (String) -> Void
    let onFinish: @Sendable (ChatClient.ExitStatus) -> Void
    var link: LongLinkClient<ChatCodec>?
    /// The reconnect attempt in progress, if any.
    var attempt: Int?
    var finished = false
    var refusal: ChatClient.ExitStatus?

    init(name: String, output: @escaping @Sendable (String) -> Void, onFinish: @escaping @Sendable (ChatClient.ExitStatus) -> Void) {
        self.name = name
        self.output = output
        self.onFinish = onFinish
    }

    func handle(_ event: LongLinkClient<ChatCodec>.Event) {
        switch event {
        case .connected(let host, let port):
            if let attempt {
                output("* reconnect attempt \(attempt) succeeded: connected to \(host):\(port)")
            } else {
                output("* connected to \(host):\(port)")
            }
            attempt = nil
        case .connectFailed(let error):
            if let attempt {
                output("* reconnect attempt \(attempt) failed: \(error)")
            } else {
                output("* connect failed: \(error)")
            }
        case .reconnecting(let attempt, _):
            self.attempt = attempt
            output("* \(event)")
        case .disconnected(let reason):
            output("* disconnected (\(reason))")
            if reason == .byUser { finish(refusal ?? .quit) }
        case .serverUnavailable:
            output("* server unavailable")
            finish(.serverUnavailable)
        case .received(let message):
            handle(message)
        case .sendFailed(let message, let reason):
            output("! not sent (\(reason)): \(message.description.terminalSafe)")
        case .stored, .refused:
            break  // reliable delivery only; this link is plain
        }
    }

    func handle(_ message: ChatMessage) {
        switch message {
        case .loginAccepted(let name, let online, let count, let token):
            link?.greeting = .login(name: name, resumeToken: token)
            var list = online.isEmpty ? "nobody else" : online.map(\.terminalSafe).joined(separator: ", ")
            if count > online.count { list += " and \(count - online.count) more" }
            output("* logged in as \(name.terminalSafe); online: \(list)")
        case .delivery(let from, let text, let isDirect):
            output(isDirect ? "\(from.terminalSafe) (direct): \(text.terminalSafe)" : "\(from.terminalSafe): \(text.terminalSafe)")
        case .presence(let name, let online):
            output("* \(name.terminalSafe) \(online ? "joined" : "left")")
        case .error(let code, let detail):
            output("! \(code.rawValue): \(detail.terminalSafe)")
            if code == .nameTaken || code == .invalidName {
                refusal = .loginRefused
                link?.disconnect()
            }
        case .login, .directMessage, .broadcast, .heartbeat, .heartbeatAck, .v2:
            break  // this client speaks version 1
        }
    }

    func finish(_ status: ChatClient.ExitStatus) {
        guard !finished else { return }
        finished = true
        onFinish(status)
    }
}

extension String {
    /// The text with control characters (C0, DEL, C1: escape sequences, carriage returns, newlines, bells)
    /// shown as `\u{1B}` and the like, so text from the network cannot move the cursor, recolour the
    /// terminal or forge extra lines.
    var terminalSafe: String {
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
