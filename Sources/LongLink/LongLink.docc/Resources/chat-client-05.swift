// chat-client, step 5: choose the heartbeat and the reconnect schedule, and give it several servers.
//
//     chat-client PORT NAME [PORT ...]
//
// A line goes to everyone; `/to NAME text` to one user; `/quit` or the end of the input leaves.
// Further ports are more im-server processes on this machine, tried in turn when a connection drops.
import Dispatch
import Foundation
import ChatClient
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

let usage = "usage: chat-client PORT NAME [PORT ...]"
let arguments = CommandLine.arguments
guard arguments.count >= 3, let port = UInt16(arguments[1]) else {
    fail(usage, status: 64)
}
let name = arguments[2]
var endpoints = [Endpoint(host: "127.0.0.1", port: port)]
for argument in arguments.dropFirst(3) {
    guard let otherPort = UInt16(argument) else {
        fail(usage, status: 64)
    }
    endpoints.append(Endpoint(host: "127.0.0.1", port: otherPort))
}

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
    case .sendFailed(let message, let failure):
        say("! not sent (\(failure)): \(message)")
    case .disconnected(.byUser):
        // After /quit: what was queued has gone out, and the server has answered the last
        // heartbeat, so its replies have arrived (or the 5 s drain timeout has passed).
        exit(0)
    case .disconnected(let reason):
        say("* disconnected (\(reason))")
    case .reconnecting(let attempt, let delay, let endpoint):
        let target = endpoint.map { " to \($0)" } ?? ""
        say("* reconnect attempt \(attempt)\(target) in \(delay)")
    case .serverUnavailable:
        // With keepTrying the link says this once per outage, and goes on trying.
        say("! server unavailable; still trying")
    default:
        say("* \(event)")
    }
}

var configuration = ChatLink.Configuration(endpoints: endpoints)
// A heartbeat every 30 s; a link from which nothing arrives for 10 s after one is dead (while
// the login is unanswered, the deadline is at least the 20 s connect timeout).
configuration.heartbeatInterval = .seconds(30)
configuration.heartbeatAckTimeout = .seconds(10)
// Retry after 1, 2, 4, 8 and 16 s (each plus up to 1 s of jitter), then every 30 s until /quit;
// start over once a connection has stayed up for 30 s.
configuration.reconnectSchedule = .exponential(base: .seconds(1), cap: .seconds(30), attempts: 5)
configuration.reconnectPolicy = .keepTrying(cap: .seconds(30))
configuration.linkHealthyAfter = .seconds(30)
// Keep at most 100 messages typed while offline.
configuration.offlineQueueLimit = 100

/// The queue the link's events run on, one at a time, in order.
let events = DispatchQueue(label: "chat-client.events")
let link = ChatLink(codec: ChatCodec(), configuration: configuration, eventQueue: events) { event in
    show(event)
}
// Sent first on every connection, before anything queued: each reconnect logs in again.
link.greeting = .login(name: name, resumeToken: nil)

/// Acts on one typed line; returns false once the user asked to leave.
@Sendable func handle(line: String) -> Bool {
    switch ChatCommand.parse(line) {
    case .broadcast(let text):
        link.send(.broadcast(text: text))
    case .direct(let to, let text):
        link.send(.directMessage(to: to, text: text))
    case .quit:
        return false
    case .listCommands:
        say("commands: /to NAME text (direct message), /quit; any other line goes to everyone")
    case .history, .who:
        say("! /history and /who need protocol version 2")
    case .invalid(let help):
        say("! \(help)")
    case .nothing:
        break
    }
    return true
}

link.connect()

// Standard input is read on a thread of its own; the link and its events never wait for it.
let input = Thread {
    while let line = readLine(), handle(line: line) {}
    say("* leaving")
    link.disconnectAfterSending()
    // A link that keeps trying would wait for an absent server as long as it takes: give it 15 s.
    events.asyncAfter(deadline: .now() + .seconds(15)) {
        fail("could not deliver what was sent within 15 s", status: 1)
    }
}
input.start()
dispatchMain()
