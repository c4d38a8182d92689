import AsyncSocket
@testable import ChatClient
import ChatCommandLine
@testable import ChatProtocol
@testable import ChatServer
import Foundation
@testable import im_client
@testable import im_server
import Testing

/// The rule that picks one server among those that answered discovery, and the discovery flags of both
/// programs.
@Suite struct DiscoveryChoiceAndOptionsTests {
    static func server(_ name: String, users: UInt32) -> DiscoveredServer {
        DiscoveredServer(
            name: name, host: "127.0.0.1", port: 7000, onlineUsers: users,
            answeredFrom: SocketAddress(ipAddress: "127.0.0.1", port: 7777)!)
    }

    @Test func theLeastBusyServerIsChosenAndTiesGoToTheEarliestAnswer() {
        #expect(DiscoveryClient.choose(from: []) == nil)
        let busy = Self.server("busy", users: 9), quiet = Self.server("quiet", users: 2), alsoQuiet = Self.server("also", users: 2)
        #expect(DiscoveryClient.choose(from: [busy, quiet, alsoQuiet])?.name == "quiet")
        #expect(DiscoveryClient.choose(from: [alsoQuiet, busy, quiet])?.name == "also")
        #expect(DiscoveryClient.choose(from: [busy])?.name == "busy")
    }

    @Test func discoveryOptions() throws {
        let server = try ServerOptions(arguments: [])
        #expect(server.discovery == DiscoveryResponder.Configuration(group: "239.255.77.77", port: 7777, serverName: "chat"))
        #expect(try ServerOptions(arguments: ["--no-discovery"]).discovery == nil)
        let named = try ServerOptions(arguments: ["--name", "lobby", "--discovery-group", "239.255.1.2", "--discovery-port", "0"])
        #expect(named.discovery == DiscoveryResponder.Configuration(group: "239.255.1.2", port: 0, serverName: "lobby"))

        #expect(try ClientOptions(arguments: ["ann"]).discovery == nil)
        let plain = try #require(try ClientOptions(arguments: ["ann", "--discover"]).discovery)
        #expect(plain == DiscoveryClient.Configuration())
        #expect(plain.timeout == .seconds(1) && plain.ttl == 1 && plain.interfaces == ["127.0.0.1", nil])
        let set = try #require(
            try ClientOptions(arguments: [
                "ann", "--discover", "--discover-timeout", "0.25", "--discover-group", "239.255.1.2", "--discover-port", "9",
                "--discover-ttl", "0", "--discover-name", "lobby", "--discover-interface", "lo", "--discover-interface", "default"
            ]).discovery)
        #expect(set.timeout == .milliseconds(250) && set.group == "239.255.1.2" && set.port == 9 && set.ttl == 0)
        #expect(set.serverName == "lobby" && set.interfaces == ["lo", nil])

        #expect(throws: UsageError(description: "--discover finds the server: do not give --port too\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--discover", "--port", "1"])
        }
        #expect(throws: UsageError(description: "--discover-ttl needs --discover\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--discover-ttl", "0"])
        }
        #expect(throws: UsageError(description: "--discover-ttl: not a TTL (0-255): 256\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--discover", "--discover-ttl", "256"])
        }
        // Multicast only (224.0.0.0-239.255.255.255): the addresses just outside the range, a broadcast
        // address, a unicast one, IPv6, a name.
        for group in ["223.255.255.255", "240.0.0.0", "127.255.255.255", "192.0.2.1", "ff02::1", "chat.example"] {
            #expect(
                throws: UsageError(
                    description:
                        "--discover-group: not an IPv4 multicast address (224.0.0.0-239.255.255.255): \(group)\n\(ClientOptions.usage)")
            ) {
                try ClientOptions(arguments: ["ann", "--discover", "--discover-group", group])
            }
        }
        #expect(
            throws: UsageError(
                description: "--discovery-group: not an IPv4 multicast address (224.0.0.0-239.255.255.255): ff02::1\n\(ServerOptions.usage)"
            )
        ) {
            try ServerOptions(arguments: ["--discovery-group", "ff02::1"])
        }
        #expect(
            throws: UsageError(description: "--name: a name is 1 to 64 bytes of UTF-8 without control characters\n\(ServerOptions.usage)")
        ) {
            try ServerOptions(arguments: ["--name", ""])
        }
    }

    /// Moved from the codec tests: `DiscoveryError` is the client's.
    @Test func errorsReadWell() {
        let none = DiscoveryError.noAnswer(group: "239.255.77.77", port: 7777, timeout: .seconds(1), ignoredDatagrams: 0)
        #expect(none.description == "no chat server answered discovery on 239.255.77.77:7777 within 1 s")
        let some = DiscoveryError.noAnswer(group: "239.255.77.77", port: 7777, timeout: .milliseconds(500), ignoredDatagrams: 2)
        #expect(some.description == "no chat server answered discovery on 239.255.77.77:7777 within 0.5 s (2 datagrams ignored)")
    }
}
