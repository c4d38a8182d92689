// chat-client, step 1: connect a LongLink client to im-server on this machine.
//
//     chat-client PORT
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
guard arguments.count == 2, let port = UInt16(arguments[1]) else {
    fail("usage: chat-client PORT", status: 64)
}

/// Prints what the link reports.
@Sendable func show(_ event: ChatLink.Event) {
    switch event {
    case .connected(let host, let serverPort):
        say("* connected to \(host):\(serverPort)")
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

link.connect()
dispatchMain()
