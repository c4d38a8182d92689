import Foundation

/// Source addresses for a load run's connections (``LoadOptions/SourceSpread``): one source address
/// has only the kernel's ephemeral ports (`/proc/sys/net/ipv4/ip_local_port_range`, 32768–60999 by
/// default: 28,232), so more connections than that to one server need several; on loopback every
/// 127.x.x.x address is local, and connection i binds 127.0.0.(2 + i mod 249), as the idle mode of
/// `socket-bench client` does.
enum SourceAddresses {
    /// Source addresses used when spreading: 249.
    static let count = 249

    /// The source address of connection `index`.
    static func address(of index: Int) -> String { "127.0.0.\(2 + index % count)" }

    /// Ephemeral ports of one source address, from `/proc/sys/net/ipv4/ip_local_port_range`
    /// (28,232 when it cannot be read).
    static func ephemeralPorts() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return 28_232 }
        return ephemeralPorts(inRange: text) ?? 28_232
    }

    /// The ports of a `ip_local_port_range` text, `"32768\t60999\n"` → 28,232.
    static func ephemeralPorts(inRange text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard fields.count == 2, fields[1] >= fields[0] else { return nil }
        return fields[1] - fields[0] + 1
    }

    /// Whether a run of `options` spreads its source addresses.
    static func spreads(_ options: LoadOptions, ephemeralPorts: Int = SourceAddresses.ephemeralPorts()) -> Bool {
        switch options.sourceSpread {
        case .off: return false
        case .on: return true
        case .auto: return options.servers.allSatisfy(\.isIPv4Loopback) && options.connections > ephemeralPorts - 1_000
        }
    }
}
