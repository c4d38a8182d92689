import AsyncSocket
import ChatClient
import ChatCommandLine
import ChatProtocol
import Foundation
import LongLink
import SocketLog

/// `im-client NAME [--host H] [--port P] [--heartbeat SECONDS | --smart-heartbeat] [--protocol 1|2] [--password-file FILE]
/// [--data-dir DIR] [--wait SECONDS]`, or `--server HOST:PORT` (repeatable) instead of
/// `--host`/`--port`, or with `--discover` instead of either:
/// `[--discover-timeout S] [--discover-group G] [--discover-port P] [--discover-ttl N]
/// [--discover-name NAME] [--discover-interface I]…`. ``help`` explains them all.
public struct ClientOptions: Equatable, Sendable {
    /// The user name to log in with.
    public var name: String
    /// Server host. Default 127.0.0.1.
    public var host = "127.0.0.1"
    /// Server port. Default ``defaultChatPort``.
    public var port = defaultChatPort
    /// `--server HOST:PORT`, repeatable (IPv6 in brackets, `[::1]:7000`): the chat's servers in the
    /// order given, instead of ``host`` and ``port``; the client connects to the first and moves to the
    /// next one when a connect fails or the connection drops (``ChatClient/Configuration/endpoints``).
    /// Empty (the default): the one server ``host``:``port``.
    public var servers: [Endpoint] = []
    /// Seconds between heartbeats. Default 180 s, the articles' value.
    public var heartbeat: Duration = .seconds(180)
    /// `--smart-heartbeat`: the adaptive heartbeat (``ChatClient/Configuration/smartHeartbeat``) with
    /// Mars's figures, its learned intervals in `heartbeat-intervals.json` in the data directory.
    /// Default false: a heartbeat every ``heartbeat``.
    public var smartHeartbeat = false
    /// Find the server by LAN discovery instead of ``host`` and ``port`` (`--discover`); `nil` (the
    /// default) connects to ``host``:``port``. The `--discover-…` flags change the search:
    /// `--discover-timeout` (seconds, default 1), `--discover-group`, `--discover-port`, `--discover-ttl`
    /// (0–255, default 1), `--discover-name` (only that server), `--discover-interface` (repeatable;
    /// `default` for the routed interface; replaces the default list 127.0.0.1 + routed).
    public var discovery: DiscoveryClient.Configuration?
    /// The chat protocol version to speak (`--protocol 1` or `2`). Default ``ChatProtocolVersion/v2``:
    /// numbered messages kept in an outbox until stored, receipts, history. Version 1 is live only.
    public var protocolVersion: ChatProtocolVersion = .v2
    /// `--password-file FILE`: the password is the file's first line. `nil` (the default): in a
    /// terminal, `im-client` asks for it without echo (an empty answer logs in without one); otherwise
    /// it logs in without a password (live only). Version 2 only.
    public var passwordFile: String?
    /// `--data-dir DIR`: where the outbox, positions and receipts are kept (``ChatClientState``).
    /// `nil` (the default) means ``ChatClientState/defaultDirectory(environment:)``:
    /// `$XDG_DATA_HOME/im-client`, or `~/.local/share/im-client`. Version 2 only.
    public var dataDirectory: String?
    /// `--wait SECONDS`: once input has ended (end of file or `/quit`), how long to wait for the server
    /// to store the messages still in the outbox (restarted whenever one is stored) before exiting
    /// with status 1. Default 30 s.
    public var wait: Duration = .seconds(30)
    /// `--timestamps`: in a pipe, every line starts with its UTC time in ISO 8601
    /// (``ChatClient/Configuration/timestamps``). Default false. A terminal always shows local `HH:MM`.
    public var timestamps = false
    /// `--tls`: TLS to the server, verified as the host connected to (``host``, or the `--server` the
    /// connection went to: its certificate must name it) against the system's trust store, or against
    /// `--ca FILE` only (which implies `--tls`). Default off.
    public var tls = false
    /// `--ca FILE`: the PEM certificates the server's chain must lead to (a self-signed certificate
    /// can be its own); nil: the system's trust store.
    public var caFile: String?

    /// The servers to connect to: ``servers`` when `--server` was given, else ``host``:``port``.
    public var endpoints: [Endpoint] { servers.isEmpty ? [Endpoint(host: host, port: port)] : servers }

    /// The synopsis printed with every usage error.
    public static let usage =
        "usage: im-client NAME [--host H] [--port P] [--heartbeat SECONDS | --smart-heartbeat] [--protocol 1|2]\n"
        + "                 [--password-file FILE] [--data-dir DIR] [--wait SECONDS] [--timestamps] [--tls [--ca FILE]]\n"
        + "       im-client NAME --server HOST:PORT [--server HOST:PORT]... [other flags as above]\n"
        + "       im-client NAME --discover [--discover-timeout S] [--discover-group G] [--discover-port P]\n"
        + "                 [--discover-ttl N] [--discover-name NAME] [--discover-interface I]... [other flags as above]"

    /// The text printed for `--help`: the synopsis, every flag with its default, the terminal's screen,
    /// the lines the client prints (the same in a terminal and in a pipe, except where marked) and the
    /// exit statuses.
    public static let help =
        usage + """


            Chat as NAME. Lines typed (or piped) in are messages: /to NAME text, /history [NAME] [N],
            /who [more], /help, /quit; any other line goes to everyone.

              --host H                server host name or address (default 127.0.0.1)
              --port P                server TCP port (default \(defaultChatPort))
              --server HOST:PORT      a server of the chat, instead of --host and --port (IPv6 in
                                      brackets: [::1]:7000). Repeat it for the nodes of a cluster: the
                                      client connects to the first; when a connect fails or the
                                      connection drops, each reconnect attempt goes to the next one
                                      (after the last, the first again), on the reconnect schedule
              --heartbeat SECONDS     seconds between heartbeats (default 180)
              --smart-heartbeat       learn per network how long its NAT keeps an idle connection and
                                      beat just under it (210 s up to 600 s in 60 s steps, as WeChat's
                                      Mars); reconnect at once when the default route changes. The
                                      server's --idle-timeout should exceed 630 s
              --protocol 1|2          protocol version (default 2; 1: live messages only, no ids, as before)
              --password-file FILE    the password is the first line of FILE; without it a terminal asks
                                      (empty: none) and a pipe logs in without one (live only: nothing is
                                      stored for you, no history, no receipts)
              --data-dir DIR          where the outbox, positions and receipts are kept, one file set per
                                      name and server (the first --server; default
                                      $XDG_DATA_HOME/im-client, or ~/.local/share/im-client; created
                                      with mode 0700)
              --wait SECONDS          after the input ends, how long to wait for the server to store what
                                      is in the outbox (restarted at each message stored; default 30)
              --timestamps            in a pipe, start every line with its UTC time, ISO 8601, and a space:
                                      2023-11-14T22:13:20.123Z stored #17 (default off; a terminal always
                                      starts lines with the local time, 14:02)
              --tls                   TLS 1.2 or 1.3 to the server, whose certificate must name the host
                                      connected to (--host, or that --server's) and chain to the
                                      system's trust store (default: plaintext)
              --ca FILE               trust only the PEM certificates in FILE instead (implies --tls; a
                                      self-signed server certificate can be its own CA)
              --discover              find the server by LAN discovery instead of --host/--port or
                                      --server (default off; docs/PROTOCOL.md); with it:
              --discover-timeout S    how long to collect answers (default 1)
              --discover-group G      multicast group to ask (default 239.255.77.77)
              --discover-port P       UDP port to ask (default 7777)
              --discover-ttl N        multicast TTL, 0-255 (default 1: this network; 0: this host only)
              --discover-name NAME    only the server of that name (default: any; the one with the fewest
                                      users online is chosen)
              --discover-interface I  ask from interface I: an address, a name, or default (the routed
                                      one); repeatable (default: 127.0.0.1 and the routed interface)
              --version               print the version (im-client \(chatVersion)) and exit
              -h, --help              print this help and exit

            In a terminal (standard input and output both terminals), what you type stays on the bottom
            line, under a status line, and what arrives prints above them without disturbing it:
              14:02 * logged in as ann; online: bob
              14:02 bob (direct): hi ann
              14:03 #17 → bob: hello bob
              14:03 ✓ #17 stored
              [online as ann · 1 message waiting]
              > what you are typ_
            Every line starts with its local time; names are in colour unless NO_COLOR is set (to anything
            but the empty string). The status line says: connecting… / logging in as NAME… / online as NAME /
            reconnecting in N s (attempt A at HH:MM:SS), after "server unavailable; " once the first attempts
            failed / offline; then how many of your messages wait in the outbox, and "leaving" after /quit.
            Editing and history are libedit's (emacs keys, ~/.editrc; Up for earlier lines, Ctrl-L redraws).
            Ctrl-D on an empty line or /quit leaves once what you sent is stored; Ctrl-C, SIGTERM or SIGHUP
            leave at once (what the server has not stored stays in the outbox for the next start); Ctrl-Z
            suspends. The terminal is put back as it was on every way out, and what was typed but not sent
            is dropped, not left for the shell.

            Lines printed (protocol 2), in a terminal (after the time) / in a pipe (standard input or output
            not a terminal):
              #17 → bob: hi                 / accepted #17 to bob: hi      your message, in the outbox as #17
              #18 → everyone: hi all        / accepted #18 broadcast: hi all
              ✓ #17 stored                  / stored #17       the server has stored #17: it will not be lost
              ✓ #17 passed on (live only)   / passed #17       no password: passed to those online, not stored
              ✓✓ #17 received by bob        / received #17 by bob          bob's client has received #17
              ✗ #17 refused                 / refused #17      refused for good (the line before says why)
              you (another device) → bob: hi / you to bob: hi  your own message, sent by another client of yours
              you (another device): hi all  / you broadcast: hi all
              → bob: hi                     / sent to bob: hi  protocol 1: your message, sent (no ids there)
              → everyone: hi all            / sent broadcast: hi all
              * history with bob, 2 messages: / history direct:ann bob: 2 messages       (/history bob)
                #5 2023-11-14 22:13 bob: hi / history direct:ann bob #5 1700000000123 bob: hi
                                              (sequence number, time in ms since 1970, sender: text)
              * bob, carl and 3 others joined / * joined: bob carl dan eve fay   who came online in the
              * dan left                    / * left: dan      last presence tick (a pipe lists every name)
              * 205 more joined or left; 1234 online           changes in a crowded tick not listed
              * online (150): ann, bob; /who more for the next page
                                            / online 150 more: ann bob    (/who; "end" on the last page)
              * no more names; /who starts from the first      (/who more after the last page)
            The same in both:
              bob (direct): hi              a direct message from bob
              bob: hi all                   a message from bob to everyone
              commands: ...                 the answer to /help
              ! CODE: detail                an error; ! CODE for #17: detail when it answers #17
              ! usage: /to NAME text        a command not understood (also ! unknown command /x; ...), or
              ! /who needs protocol version 2 ...          not available with --protocol 1
              ! server unavailable; still trying     said once; reconnecting goes on (delays up to 60 s)
              ! rateLimited for #17: ...    sent too fast: #17 waits in the outbox and is resent; said once,
              * sending one message at a time until the outbox is empty    and the rest follow one by one
              ! not sent: the text is N bytes as sent (JSON); at most 65000       a text over the limit
              * ...                         connection news: connected, logged in, joined, left,
                                            disconnected, reconnect attempt N in S s (attempt N to
                                            HOST:PORT with several --server; a terminal adds the clock
                                            time), messages left in the outbox
              * heartbeat interval 210 s → 270 s (stepped up)  --smart-heartbeat: the interval changed
              * no answer to the heartbeat after 330 s idle    a probe failed (a reconnect follows)
              * network changed: eth0 via 192.0.2.1 → wlan0 via 10.0.0.1   (a reconnect follows)
            Text from others is shown with control characters escaped (\\u{1B}).

            Exit status: 0 once every message is stored (or refused) after the input ends or /quit; 1 when
            --wait passed without the server storing any, or without a login (the line before says how many
            messages stay in the outbox, for the next start); 2 when the server refused the name or
            password (an input already ended waits for the login's answer); 3 when the
            data directory cannot be used (another im-client uses it for this name and server, say);
            4 as 0, but something failed on the way: a message was refused for good, the server could not do
            a command, or a command was not understood or needs protocol 2 (the ! lines say what; answers
            the client rides out, such as loginTimeout or rateLimited during an outage, are none); 64 for bad
            flags or an unreadable password file; in a terminal 130 after Ctrl-C, 143 after SIGTERM, 129
            after SIGHUP (128 + the signal's number).
            """

    /// Whether `im-client` shows names in colour: only in a `terminal` (standard input and output both
    /// terminals), and only while `NO_COLOR` is unset or empty (https://no-color.org: any other value,
    /// even `0`, turns colour off).
    public static func wantsColor(terminal: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        terminal && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError``.
    public init(arguments: [String]) throws(UsageError) {
        var parser = ArgumentParser(arguments, usage: ClientOptions.usage)
        var name: String?
        var search = DiscoveryClient.Configuration()
        var discover = false
        var addressFlag: String?
        var serverFlag: String?
        var searchFlag: String?
        var versionTwoFlag: String?
        var interfaces: [String?] = []
        while let option = parser.nextOption() {
            switch option {
            case "--host", "--port":
                addressFlag = option
                if option == "--host" { host = try parser.value(for: option) } else { port = try parser.port(for: option) }
            case "--server":
                servers.append(try parser.server(for: option))
                serverFlag = option
            case "--heartbeat": heartbeat = try parser.seconds(for: option)
            case "--smart-heartbeat": smartHeartbeat = true
            case "--protocol":
                let text = try parser.value(for: option)
                guard let number = UInt16(text), let version = ChatProtocolVersion(rawValue: number) else {
                    throw UsageError(description: "\(option): 1 or 2, not \(text)\n\(ClientOptions.usage)")
                }
                protocolVersion = version
            case "--password-file":
                passwordFile = try parser.value(for: option)
                versionTwoFlag = option
            case "--data-dir":
                dataDirectory = try parser.value(for: option)
                versionTwoFlag = option
            case "--wait": wait = try parser.seconds(for: option)
            case "--timestamps": timestamps = true
            case "--tls": tls = true
            case "--ca":
                caFile = try parser.value(for: option)
                tls = true
            case "--discover": discover = true
            case "--discover-timeout": search.timeout = try parser.seconds(for: option)
            case "--discover-group": search.group = try parser.group(for: option)
            case "--discover-port": search.port = try parser.port(for: option)
            case "--discover-ttl":
                let text = try parser.value(for: option)
                guard let ttl = UInt8(text) else {
                    throw UsageError(description: "\(option): not a TTL (0-255): \(text)\n\(ClientOptions.usage)")
                }
                search.ttl = ttl
            case "--discover-name": search.serverName = try parser.serverName(for: option, allowEmpty: true)
            case "--discover-interface":
                let interface = try parser.value(for: option)
                interfaces.append(interface == "default" ? nil : interface)
            default: throw parser.unknown(option)
            }
            if option.hasPrefix("--discover-") { searchFlag = option }
        }
        if !interfaces.isEmpty { search.interfaces = interfaces }
        if discover, let flag = addressFlag ?? serverFlag {
            throw UsageError(description: "--discover finds the server: do not give \(flag) too\n\(ClientOptions.usage)")
        }
        if serverFlag != nil, let addressFlag {
            throw UsageError(description: "--server names host and port: do not give \(addressFlag) too\n\(ClientOptions.usage)")
        }
        if !discover, let searchFlag {
            throw UsageError(description: "\(searchFlag) needs --discover\n\(ClientOptions.usage)")
        }
        if protocolVersion == .v1, let versionTwoFlag {
            throw UsageError(description: "\(versionTwoFlag) needs --protocol 2\n\(ClientOptions.usage)")
        }
        discovery = discover ? search : nil
        name = parser.positionals.first
        guard let name, parser.positionals.count == 1 else {
            let what =
                name == nil
                ? "NAME is required (the user name to chat as)"
                : "one NAME only, not \(parser.positionals.count): \(parser.positionals.joined(separator: " "))"
            throw UsageError(description: "\(what)\n\(ClientOptions.usage)")
        }
        self.name = name
    }
}

extension ClientOptions {
    /// The password to log in with: the first line of ``passwordFile`` if given; else, when
    /// `interactive` (standard input and output are a terminal), typed at a prompt without echo on
    /// standard error (an empty line: none); else none. Always `nil` for protocol version 1.
    /// Blocks while the prompt waits.
    /// - Throws: ``PasswordError``.
    public func password(interactive: Bool) throws(PasswordError) -> String? {
        guard protocolVersion == .v2 else { return nil }
        if let passwordFile { return try PasswordInput.read(file: passwordFile) }
        guard interactive else { return nil }
        return try PasswordInput.prompt("password for \(name.terminalSafe) (empty: none, live only): ")
    }

    /// The ``ChatClient`` configuration these options describe, for the server at `host`:`port` (from
    /// the options or found by discovery), with `password` and lines for a terminal or a pipe; names
    /// in colour in a terminal unless `environment` has a non-empty `NO_COLOR`
    /// (``wantsColor(terminal:environment:)``).
    public func configuration(
        host: String, port: UInt16, password: String?, style: ChatClient.OutputStyle,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ChatClient.Configuration {
        configuration(endpoints: [Endpoint(host: host, port: port)], password: password, style: style, environment: environment)
    }

    /// The ``ChatClient`` configuration these options describe, for the chat's servers `endpoints`
    /// (``endpoints``, or one found by discovery), otherwise as
    /// ``configuration(host:port:password:style:environment:)``. With `--tls` each connection's
    /// server is verified as the host of the endpoint it went to.
    public func configuration(
        endpoints: [Endpoint], password: String?, style: ChatClient.OutputStyle,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ChatClient.Configuration {
        var configuration = ChatClient.Configuration(name: name, endpoints: endpoints)
        configuration.heartbeat = heartbeat
        if smartHeartbeat {
            var smart = SmartHeartbeat()
            if let directory = dataDirectory ?? ChatClientState.defaultDirectory(environment: environment) {
                smart.store = FileHeartbeatIntervalStore(
                    url: URL(fileURLWithPath: directory).appendingPathComponent("heartbeat-intervals.json"))
            }
            configuration.smartHeartbeat = smart
        }
        configuration.protocolVersion = protocolVersion
        configuration.password = password
        configuration.dataDirectory = dataDirectory
        configuration.display.style = style
        configuration.wait = wait
        configuration.display.timestamps = timestamps
        configuration.display.color = Self.wantsColor(terminal: style == .terminal, environment: environment)
        if tls {
            // No peer name: the link verifies each server as the endpoint it connected to.
            var settings = TLSConfiguration.client(peerName: nil)
            if let caFile { settings.trustRoots = .files([caFile]) }
            configuration.tls = settings
        }
        return configuration
    }
}
