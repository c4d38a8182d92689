// im-client: the chat client. Parses flags, starts IMChat.ChatClient, feeds it standard input line by
// line (terminal or pipe) and prints what it reports.
import Dispatch
import Foundation
import IMChat

/// One line to standard output, unbuffered, so pipes see it at once.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    say(ClientOptions.usage)
    say(ChatCommand.help)
    exit(0)
}
let options: ClientOptions
do {
    options = try ClientOptions(arguments: arguments)
} catch {
    FileHandle.standardError.write(Data("im-client: \(error)\n".utf8))
    exit(64)
}

/// Connects to `host`:`port`, then feeds standard input to the client.
func chat(_ options: ClientOptions, host: String, port: UInt16) {
    let client = ChatClient(
        name: options.name, host: host, port: port, heartbeat: options.heartbeat,
        output: { line in say(line) },
        onFinish: { status in exit(status.rawValue) })
    client.start()
    let input = Thread {
        while let line = readLine() { client.handle(line: line) }
        client.finishInput()
    }
    input.start()
}

if let discovery = options.discovery {
    let discoveryOptions = options
    DiscoveryClient.discover(discovery) { result in
        switch result {
        case .success(let found):
            say(found.report)
            chat(discoveryOptions, host: found.chosen.host, port: found.chosen.port)
        case .failure(let error):
            FileHandle.standardError.write(Data("im-client: \(error)\n".utf8))
            exit(ChatClient.ExitStatus.serverUnavailable.rawValue)
        }
    }
} else {
    chat(options, host: options.host, port: options.port)
}
dispatchMain()
