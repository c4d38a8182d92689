@testable import ChatCommandLine
import Foundation
@testable import im_client
import LongLink
import Testing

/// `im-client --server HOST:PORT`, repeatable, beside `--host`/`--port`.
extension CommandLineOptionsTests {
    @Test func serverFlagsListTheChatsServersInTheOrderGiven() throws {
        let options = try ClientOptions(arguments: [
            "ann", "--server", "chat1.example:7000", "--server=[::1]:7001", "--server", "127.0.0.1:7002"
        ])
        let servers = [
            Endpoint(host: "chat1.example", port: 7000), Endpoint(host: "::1", port: 7001), Endpoint(host: "127.0.0.1", port: 7002)
        ]
        #expect(options.servers == servers)
        #expect(options.endpoints == servers)
        let configuration = options.configuration(endpoints: options.endpoints, password: nil, style: .pipe)
        #expect(configuration.endpoints == servers)
        #expect(configuration.host == "chat1.example")
        #expect(configuration.port == 7000)
    }

    @Test func smartHeartbeatUsesMarsFiguresAndKeepsWhatItLearnsInTheDataDirectory() throws {
        let plain = try ClientOptions(arguments: ["ann"])
        #expect(!plain.smartHeartbeat)
        #expect(plain.configuration(host: plain.host, port: plain.port, password: nil, style: .pipe).smartHeartbeat == nil)
        let options = try ClientOptions(arguments: ["ann", "--smart-heartbeat", "--data-dir", "/tmp/ann-chat"])
        #expect(options.smartHeartbeat)
        let smart = try #require(options.configuration(host: options.host, port: options.port, password: nil, style: .pipe).smartHeartbeat)
        #expect([smart.minimum, smart.maximum, smart.step, smart.margin] == [.seconds(210), .seconds(600), .seconds(60), .seconds(20)])
        #expect((smart.store as? FileHeartbeatIntervalStore)?.url.path == "/tmp/ann-chat/heartbeat-intervals.json")
    }

    @Test func hostAndPortStillNameTheOneServer() throws {
        #expect(try ClientOptions(arguments: ["ann"]).endpoints == [Endpoint(host: "127.0.0.1", port: 7777)])
        let options = try ClientOptions(arguments: ["ann", "--host", "::1", "--port", "7001"])
        #expect(options.servers == [])
        #expect(options.endpoints == [Endpoint(host: "::1", port: 7001)])
        let configuration = options.configuration(host: options.host, port: options.port, password: nil, style: .pipe)
        #expect(configuration.endpoints == [Endpoint(host: "::1", port: 7001)])
    }

    @Test func aServerIsHostColonPortWithIPv6InBrackets() {
        for text in [
            "chat.example", "chat.example:", ":7000", "::1:7000", "::1", "[::1]", "[::1]7000", "[::1]:", "[]:7000",
            "[::1:7000", "chat.example:0", "chat.example:70000", "chat.example:+7000", "chat.example:7x"
        ] {
            #expect(
                throws: UsageError(
                    description: "--server: not HOST:PORT (IPv6 in brackets: [::1]:7000; port 1-65535): \(text)\n\(ClientOptions.usage)")
            ) {
                try ClientOptions(arguments: ["ann", "--server", text])
            }
        }
        #expect(throws: UsageError(description: "--server needs a value\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--server"])
        }
    }

    @Test func serverReplacesHostAndPortAndDiscovery() {
        #expect(throws: UsageError(description: "--server names host and port: do not give --port too\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--server", "a.example:1", "--port", "2"])
        }
        #expect(throws: UsageError(description: "--server names host and port: do not give --host too\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--host", "b.example", "--server", "a.example:1"])
        }
        #expect(throws: UsageError(description: "--discover finds the server: do not give --server too\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--discover", "--server", "a.example:1"])
        }
    }

    @Test func withTLSEveryServerIsVerifiedAsTheEndpointConnectedTo() throws {
        let options = try ClientOptions(arguments: ["ann", "--server", "a.example:1", "--server", "b.example:2", "--ca", "ca.pem"])
        let tls = try #require(options.configuration(endpoints: options.endpoints, password: nil, style: .pipe).tls)
        #expect(tls.peerName == nil)  // the link verifies each connection as its endpoint's host
        #expect(tls.trustRoots == .files(["ca.pem"]))
    }

    @Test func theHelpTellsOfSeveralServersAndTheFailover() {
        #expect(ClientOptions.usage.contains("im-client NAME --server HOST:PORT [--server HOST:PORT]..."))
        #expect(ClientOptions.help.contains("--server HOST:PORT      a server of the chat, instead of --host and --port"))
        #expect(ClientOptions.help.contains("connection drops, each reconnect attempt goes to the next one"))
    }
}
