// chat-client, step 3: print the messages that arrive.
//
//     chat-client PORT NAME
import Dispatch
import Foundation
import ChatProtocol
import LongLink

/// LongLink's client, speaking the chat protocol (ChatProtocol).
typealias ChatLink = LongLinkClient<ChatCodec>

/// Writes one line to standard output at once, also through a pipe.
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes one line to standard error, then exits with `status`.
@Sendable func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("chat-client: \(message)\n".utf8))
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = UInt16(arguments[1]) else {
    fail("usage: chat-client PORT NAME", status: 64)
}
let name = arguments[2]

/// Prints one message from the server.
@Sendable func showMessage(_ message: ChatMessage) {
    switch message {
    case .loginAccepted(let me, let online, let onlineCount, _):
        let others = online.isEmpty ? "" : ": " + online.joined(separator: ", ")
        say("* logged in as \(me); \(onlineCount) others online\(others)")
    case .delivery(let from, let text, let isDirect):
        say(isDirect ? "\(from) (direct): \(text)" : "\(from): \(text)")
    case .presence(let user, let online):
        say("* \(user) \(online ? "joined" : "left")")
    case .error(let code, let detail):
        say("! \(code.rawValue): \(detail)")
        if code == .nameTaken || code == .invalidName {
            fail("login refused", status: 2)
        }
    default:
        say("* \(message)")
    }
}

/// Prints what the link reports.
@Sendable func show(_ event: ChatLink.Event) {
    switch event {
    case .connected(let host, let serverPort):
        say("* connected to \(host):\(serverPort)")
    case .received(let message):
        showMessage(message)
    case .disconnected(let reason):
        say("* disconnected (\(reason))")
    case .serverUnavailable:
        fail("server unavailable", status: 1)
    default:
        say("* \(event)")
    }
}

/// The queue the link's events run on, one at a time, in order.
let events = DispatchQueue(label: "chat-client.events")
let configuration = ChatLink.Configuration(host: "127.0.0.1", port: port)
let link = ChatLink(codec: ChatCodec(), configuration: configuration, eventQueue: events) { event in
    show(event)
}
// Sent first on every connection, before anything queued: each reconnect logs in again.
link.greeting = .login(name: name, resumeToken: nil)

link.connect()
dispatchMain()
