import AsyncSocket
@testable import ChatClient
@testable import ChatCommandLine
@testable import ChatProtocol
@testable import ChatServer
import Foundation
@testable import im_client
@testable import im_server
import SocketFraming
import Testing
import TestSupport

@Suite struct ChatCommandTests {
    @Test func linesBecomeCommands() {
        #expect(ChatCommand.parse("hello there") == .broadcast(text: "hello there"))
        #expect(ChatCommand.parse("  padded  ") == .broadcast(text: "padded"))
        #expect(ChatCommand.parse("/to bob hi  bob ") == .direct(to: "bob", text: "hi  bob"))
        #expect(ChatCommand.parse("/quit") == .quit)
        #expect(ChatCommand.parse("   ") == .nothing)
        #expect(ChatCommand.parse("/to bob") == .invalid(help: "usage: /to NAME text"))
        #expect(ChatCommand.parse("/dance") == .invalid(help: "unknown command /dance; \(ChatCommand.help)"))
    }
}

@Suite struct CommandLineOptionsTests {
    @Test func serverDefaultsAndFlags() throws {
        let defaults = try ServerOptions(arguments: [])
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.port == 7777)
        #expect(defaults.idleTimeout == .seconds(360))
        let set = try ServerOptions(arguments: ["--host", "::1", "--port=0", "--idle-timeout", "2.5"])
        #expect(set.host == "::1")
        #expect(set.port == 0)
        #expect(set.idleTimeout == .milliseconds(2500))
        #expect(defaults.presenceInterval == .milliseconds(200))
        #expect(try ServerOptions(arguments: ["--presence-interval", "10"]).presenceInterval == .seconds(10))
        #expect(defaults.store == "im-chat.sqlite" && defaults.storeSync == .normal)
        let stored = try ServerOptions(arguments: ["--store", "/tmp/x.sqlite", "--store-sync", "full"])
        #expect(stored.store == "/tmp/x.sqlite" && stored.storeSync == .full)
        #expect(defaults.retention == .keepEverything)
        #expect(
            try ServerOptions(arguments: ["--retain-messages", "100", "--retain-days", "0.5"]).retention
                == RetentionPolicy(maxMessagesPerConversation: 100, maxAge: .seconds(43_200)))
        #expect(throws: UsageError(description: "--store-sync: normal or full, not sometimes\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--store-sync", "sometimes"])
        }
        #expect(defaults.passwordCost == .interactive)
        #expect(try ServerOptions(arguments: ["--password-cost", "minimum"]).passwordCost == .minimum)
        #expect(try ServerOptions(arguments: ["--password-cost", "moderate"]).passwordCost == .moderate)
        #expect(throws: UsageError(description: "--password-cost: interactive, moderate or minimum, not cheap\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--password-cost", "cheap"])
        }
        #expect(defaults.logLevel == .info)
        #expect(try ServerOptions(arguments: ["--log-level", "warning"]).logLevel == .warning)
        #expect(
            throws: UsageError(
                description: "--log-level: one of trace, debug, info, notice, warning, error, critical, not loud\n\(ServerOptions.usage)")
        ) {
            try ServerOptions(arguments: ["--log-level", "loud"])
        }
    }

    @Test func clientNeedsExactlyOneName() throws {
        let options = try ClientOptions(arguments: ["--port", "9000", "ann", "--heartbeat", "2"])
        #expect(options.name == "ann")
        #expect(options.port == 9000)
        #expect(options.heartbeat == .seconds(2))
        #expect(options.host == "127.0.0.1")
        #expect(throws: UsageError(description: "NAME is required (the user name to chat as)\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: [])
        }
        #expect(throws: UsageError(description: "one NAME only, not 2: ann bob\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "bob"])
        }
        #expect(throws: UsageError(description: "--port: not a port (0-65535): 70000\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--port", "70000"])
        }
        #expect(throws: UsageError(description: "unknown option --colour\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--colour", "red"])
        }
    }
}

/// `im-server`'s limit flags.
@Suite struct ServerLimitOptionsTests {
    @Test func defaultsAndFlags() throws {
        let defaults = try ServerOptions(arguments: []).limits
        #expect(defaults.maxConnections == ResourceLimits.defaultMaxConnections())
        #expect(defaults.messageRate == 20 && defaults.messageBurst == 300 && defaults.maxRefusedInARow == 1_000)
        #expect(defaults.loginTimeout == .seconds(10) && defaults.frameTimeout == .seconds(10))
        let set = try ServerOptions(arguments: [
            "--max-connections", "50", "--rate", "2.5", "--burst", "8", "--login-timeout", "3",
            "--frame-timeout=0.5"
        ]).limits
        #expect(set.maxConnections == 50 && set.messageRate == 2.5 && set.messageBurst == 8)
        #expect(set.loginTimeout == .seconds(3) && set.frameTimeout == .milliseconds(500))
        #expect("\(set)" == "50 connections, 2.5 messages/s per connection (burst 8), login within 3 s, frames within 0.5 s")
        #expect(throws: UsageError(description: "--max-connections: not a positive whole number: 0\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--max-connections", "0"])
        }
        #expect(throws: UsageError(description: "--rate: not a positive number of messages per second: -1\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--rate", "-1"])
        }
        #expect(throws: UsageError(description: "--login-timeout: not a positive number of seconds: soon\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--login-timeout", "soon"])
        }
    }

    @Test func theWebPortIsOffByDefaultAndOnLoopbackWhenOnlyItsPortIsGiven() throws {
        let defaults = try ServerOptions(arguments: [])
        #expect(defaults.webPort == nil && defaults.webHost == "127.0.0.1")
        let web = try ServerOptions(arguments: ["--web-port", "9090"])
        #expect(web.webPort == 9090 && web.webHost == "127.0.0.1")
        let everywhere = try ServerOptions(arguments: ["--web-port", "0", "--web-host", "::"])
        #expect(everywhere.webPort == 0 && everywhere.webHost == "::")
        #expect(ServerOptions.usage.contains("[--web-port P [--web-host H] [--web-root DIR] [--web-allow-origin ORIGIN]...]"))
        #expect(ServerOptions.help.contains("  --web-port P ") && ServerOptions.help.contains("  --web-host H "))
        #expect(ServerOptions.help.contains("  --web-allow-origin O "))
        #expect(defaults.webAllowedOrigins == [])
        let origins = try ServerOptions(arguments: [
            "--web-port", "0", "--web-allow-origin", "https://chat.example", "--web-allow-origin", "http://10.0.0.5:8080"
        ])
        #expect(origins.webAllowedOrigins == ["https://chat.example", "http://10.0.0.5:8080"])
        #expect(
            throws: UsageError(
                description:
                    "--web-allow-origin: an origin (http://HOST:PORT or https://HOST[:PORT]), not chat.example\n\(ServerOptions.usage)")
        ) {
            try ServerOptions(arguments: ["--web-allow-origin", "chat.example"])
        }
    }

    @Test func webRootIsTheBundledClientByDefaultAndADirectoryWhenGiven() throws {
        #expect(try ServerOptions(arguments: []).webRoot == nil)
        #expect(try ServerOptions(arguments: ["--web-port", "0", "--web-root", "/srv/chat"]).webRoot == "/srv/chat")
        #expect(ServerOptions.help.contains("  --web-root DIR "))
        #expect(throws: UsageError(description: "--web-root needs a directory\n\(ServerOptions.usage)")) {
            try ServerOptions(arguments: ["--web-root", ""])
        }
    }

    @Test func helpListsEachLimitWithItsDefault() {
        for flag in ["--max-connections N", "--rate R", "--burst N", "--login-timeout S", "--frame-timeout S"] {
            #expect(ServerOptions.usage.contains("[\(flag)]"), "\(flag)")
            #expect(ServerOptions.help.contains("  \(flag) "), "\(flag)")
        }
        for text in ["(default 20;", "(default 300)", "(default 10)"] {
            #expect(ServerOptions.help.contains(text), "\(text)")
        }
    }

    @Test func theDefaultConnectionLimitStaysBelowTheOpenFileLimit() {
        #expect(ResourceLimits.maxConnections(openFileLimit: 1_024) == 960)
        #expect(ResourceLimits.maxConnections(openFileLimit: 20_000) == 10_000)
        #expect(ResourceLimits.maxConnections(openFileLimit: 65) == 1)
        #expect(ResourceLimits.maxConnections(openFileLimit: 10) == 1)
        #expect(ResourceLimits.maxConnections(openFileLimit: nil) == 10_000)
        #expect(ResourceLimits.maxConnections(openFileLimit: .max) == 10_000)
    }

    /// im-server keeps glibc to 2 malloc arenas (mallopt(3) `M_ARENA_MAX`); here the default for 2 cores,
    /// 16, is set again, so the test process is left as it was.
    @Test func theMallocArenaLimitIsSetWithGlibc() {
        #if canImport(Glibc)
            #expect(ResourceLimits.limitMallocArenas(to: 16))
        #else
            #expect(!ResourceLimits.limitMallocArenas(to: 16))
        #endif
    }
}
