// im-client: the chat client. Parses flags, gets the password, starts IMChat.ChatClient and feeds it
// what is typed: in a terminal through ChatTerminal.TerminalUI (the typed line kept at the bottom under
// a status line, output above it), from a pipe line by line; prints what it reports.
import ChatClient
import ChatCommandLine
import ChatProtocol
import ChatTerminal
import Dispatch
import Foundation

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
if arguments.contains("--version") {
    say("im-client \(chatVersion)")
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

/// The style of the lines: for a person in a terminal, else for a script.
let style: ChatClient.OutputStyle = interactive ? .terminal : .pipe

/// Connects as `configuration` says (to its first server, then the next ones on a drop), then feeds
/// what is typed to the client.
func chat(_ configuration: ChatClient.Configuration) {
    if interactive {
        chatInTerminal(configuration)
        return
    }
    let client: ChatClient
    do {
        client = try ChatClient(
            configuration: configuration, output: { line in say(line) },
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

/// The client on the terminal: lines above, the status line and the typed line at the bottom, the
/// terminal put back on every way out (ChatTerminal.TerminalUI).
func chatInTerminal(_ configuration: ChatClient.Configuration) {
    // libedit reads and measures characters in the C library's locale: UTF-8, as the lines are.
    if setlocale(LC_CTYPE, "").map({ String(cString: $0) })?.uppercased().contains("UTF-8") != true {
        _ = setlocale(LC_CTYPE, "C.UTF-8")
    }
    let screen: TerminalUI
    do {
        screen = try TerminalUI()
    } catch {
        fail("\(error)", 1)
    }
    let color = configuration.display.color
    let timeZone = configuration.display.timeZone
    let client: ChatClient
    do {
        client = try ChatClient(
            configuration: configuration,
            output: { line in screen.print(line) },
            onStatus: { status in
                screen.setStatus(ticking: status.isCountingDown) { now in status.line(now: now, color: color, timeZone: timeZone) }
                if status.inputEnded { screen.endInput() }
            },
            onFinish: { status in screen.finish { exit(status.rawValue) } })
    } catch {
        fail("\(error)", 3)
    }
    do {
        try screen.start(
            onLine: { line in client.handle(line: line) },
            onEndOfInput: { client.finishInput() },
            onSignal: { signal in
                // Ctrl-C, SIGTERM, SIGHUP: leave at once; what is not stored stays in the outbox.
                let left = client.deliveryStatus?.outboxCount ?? 0
                client.stop()
                let note =
                    left == 0 ? [] : ["! \(left == 1 ? "1 message" : "\(left) messages") still in the outbox, kept for the next start"]
                screen.finish(printing: note) { exit(128 + signal) }
            })
    } catch {
        fail("\(error)", 1)
    }
    client.start()
}

if let discovery = options.discovery {
    let discoveryOptions = options
    DiscoveryClient.discover(discovery) { result in
        switch result {
        case .success(let found):
            say(found.report)
            chat(discoveryOptions.configuration(host: found.chosen.host, port: found.chosen.port, password: password, style: style))
        case .failure(let error):
            fail("\(error)", ChatClient.ExitStatus.serverUnavailable.rawValue)
        }
    }
} else {
    chat(options.configuration(endpoints: options.endpoints, password: password, style: style))
}
dispatchMain()
