import Foundation
import LongLink
import Testing

@Suite struct FileHeartbeatIntervalStoreTests {
    func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("heartbeat-\(UUID().uuidString.prefix(8))/nested/intervals.json")
    }

    @Test func whatIsSavedIsReadBackByAnotherStoreOnTheSameFile() throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent().deletingLastPathComponent()) }
        let store = FileHeartbeatIntervalStore(url: url)
        #expect(try store.learned(forNetwork: "eth0 via 192.0.2.1") == nil)  // no file yet
        let learned = LearnedHeartbeat(
            interval: .seconds(250), isSettled: true, successes: 0, failures: 1, modified: Date(timeIntervalSince1970: 1_700_000_000))
        try store.save(learned, forNetwork: "eth0 via 192.0.2.1")
        try store.save(
            LearnedHeartbeat(interval: .seconds(330), modified: Date(timeIntervalSince1970: 1_700_000_100)),
            forNetwork: "wlan0 via 10.0.0.1")
        let again = FileHeartbeatIntervalStore(url: url)
        #expect(try again.learned(forNetwork: "eth0 via 192.0.2.1") == learned)
        #expect(try again.learned(forNetwork: "wlan0 via 10.0.0.1")?.interval == .seconds(330))
        let json = try String(contentsOf: url, encoding: .utf8)
        #expect(json.contains("\"intervalMilliseconds\" : 250000"))
    }

    @Test func keepsOnlyTheMostRecentlyChangedNetworks() throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent().deletingLastPathComponent()) }
        let store = FileHeartbeatIntervalStore(url: url, limit: 2)
        for (index, network) in ["a", "b", "c"].enumerated() {
            try store.save(
                LearnedHeartbeat(interval: .seconds(210), modified: Date(timeIntervalSince1970: Double(index))), forNetwork: network)
        }
        #expect(try store.learned(forNetwork: "a") == nil)
        #expect(try store.learned(forNetwork: "b") != nil)
        #expect(try store.learned(forNetwork: "c") != nil)
    }

    @Test func aFileThatIsNotTheStoresJSONIsAnErrorNotAnEmptyStore() throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent().deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: url)
        #expect(throws: DecodingError.self) { try FileHeartbeatIntervalStore(url: url).learned(forNetwork: "a") }
    }

    @Test func theDefaultLocationFollowsXDGStateHome() {
        let path = FileHeartbeatIntervalStore.defaultLocation.path
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"] {
            #expect(path == "\(state)/swift-async-socket/heartbeat-intervals.json")
        } else {
            #expect(path.hasSuffix("/.local/state/swift-async-socket/heartbeat-intervals.json"))
        }
    }
}

@Suite struct DefaultRouteTests {
    @Test func theIPv4DefaultRouteIsItsInterfaceAndGateway() {
        let table = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            wlan0\t00000000\t0100000A\t0002\t0\t0\t600\t00000000\t0\t0\t0
            eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
            """
        // wlan0's default route is not up (flags 0x2): eth0's, gateway 192.0.2.1 (bytes C0 00 02 01 little-endian).
        #expect(DefaultRoute.ipv4(routeTable: table) == "eth0 via 192.0.2.1")
        #expect(DefaultRoute.ipv4(routeTable: "Iface\tDestination\n") == nil)
    }

    @Test func theIPv6DefaultRouteSkipsLoopback() {
        let zero = String(repeating: "0", count: 32)
        let table = """
            \(zero) 00 \(zero) 00 \(zero) ffffffff 00000001 00000000 00200200       lo
            20010db8000000000000000000000000 40 \(zero) 00 \(zero) 00000100 00000001 00000000 00000001    wlan0
            \(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003    wlan0
            """
        #expect(DefaultRoute.ipv6(routeTable: table) == "wlan0 via fe80:0:0:0:0:0:0:1")
    }

    #if os(Linux)
        @Test func thisMachinesIdentifierIsItsDefaultRoute() throws {
            let table = try String(contentsOfFile: "/proc/net/route", encoding: .utf8)
            let ipv6 = (try? String(contentsOfFile: "/proc/net/ipv6_route", encoding: .utf8)).flatMap(DefaultRoute.ipv6(routeTable:))
            #expect(DefaultRoute.networkIdentifier() == DefaultRoute.ipv4(routeTable: table) ?? ipv6)
        }

        /// The netlink socket opens and binds to the route and address groups (no route is changed: that
        /// would change the machine's); stopping it twice is harmless.
        @Test func theRouteMonitorStartsAndStops() throws {
            let monitor = RouteChangeMonitor()
            try monitor.start {}
            try monitor.start {}  // a second handler on the same socket
            monitor.stop()
            monitor.stop()
        }
    #endif
}
