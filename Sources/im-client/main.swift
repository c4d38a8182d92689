// im-client: the chat client. Parses flags, gets the password, starts IMChat.ChatClient, feeds it
// standard input line by line (terminal or pipe) and prints what it reports.
import Dispatch
import Foundation
import IMChat

/// One line to standard output, unbuffered, so pipes see it at once.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// One line to standard error, then exit with `status`.
func fail(_ message: String, _ status: Int32) -> Never {
    FileHandle.standardError.write(Data("im-client: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    say(ClientOptions.help)
    exit(0)
}
let options: ClientOptions
do {
    options = try ClientOptions(arguments: arguments)
} catch {
    fail("\(error)", 64)
}
let interactive = PasswordInput.isTerminal(STDIN_FILENO) && PasswordInput.isTerminal(STDOUT_FILENO)
let password: String?
do {
    password = try options.password(interactive: interactive)
} catch {
    fail("\(error)", 64)
}

/// Connects to `host`:`port`, then feeds standard input to the client.
func chat(_ options: ClientOptions, host: String, port: UInt16) {
    let configuration = options.configuration(host: host, port: port, password: password,
                                              style: interactive ? .terminal : .pipe)
    let client: ChatClient
    do {
        client = try ChatClient(configuration: configuration, output: { line in say(line) },
                                onFinish: { status in exit(status.rawValue) })
    } catch {
        fail("\(error)", 3)
    }
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
            fail("\(error)", ChatClient.ExitStatus.serverUnavailable.rawValue)
        }
    }
} else {
    chat(options, host: options.host, port: options.port)
}
dispatchMain()
