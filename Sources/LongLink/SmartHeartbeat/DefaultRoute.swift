import Foundation

/// The default route, as a network identifier for ``SmartHeartbeat/networkIdentifier``: a device that
/// moves from one Wi-Fi to another, or to a mobile network, gets another interface or gateway.
public enum DefaultRoute {
    /// "INTERFACE via GATEWAY" of the IPv4 default route (`/proc/net/route`), else of the IPv6 one
    /// (`/proc/net/ipv6_route`), e.g. "eth0 via 192.0.2.1"; `nil` without a default route or off Linux.
    public static func networkIdentifier() -> String? {
        #if os(Linux)
            if let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8), let id = ipv4(routeTable: table) {
                return id
            }
            if let table = try? String(contentsOfFile: "/proc/net/ipv6_route", encoding: .utf8) { return ipv6(routeTable: table) }
        #endif
        return nil
    }

    /// The default route of a `/proc/net/route` table (proc(5): a header line, then per route the
    /// interface, destination, gateway, flags, …, mask, with addresses as 8 hex digits in the
    /// kernel's byte order, little-endian on the machines Swift runs on): the first route up
    /// (RTF_UP, 0x1) with destination and mask 0, as "eth0 via 192.0.2.1".
    public static func ipv4(routeTable: String) -> String? {
        for line in routeTable.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                let flags = UInt32(fields[3], radix: 16), flags & 0x1 != 0,
                let gateway = UInt32(fields[2], radix: 16)
            else { continue }
            let bytes = withUnsafeBytes(of: gateway.littleEndian) { Array($0) }
            return "\(fields[0]) via \(bytes.map(String.init).joined(separator: "."))"
        }
        return nil
    }

    /// The default route of a `/proc/net/ipv6_route` table (per route: destination (32 hex digits),
    /// its prefix length (2), source, its prefix length, next hop (32), metric, reference count, use
    /// count, flags, interface): the first with destination `::/0` on an interface other than `lo`,
    /// as "wlan0 via fe80:0:0:0:0:0:0:1" (groups without leading zeros, not shortened).
    public static func ipv6(routeTable: String) -> String? {
        for line in routeTable.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 10, fields[0].allSatisfy({ $0 == "0" }), fields[0].count == 32, fields[1] == "00",
                fields[9] != "lo", fields[4].count == 32
            else { continue }
            let hex = Array(fields[4])
            let groups = stride(from: 0, to: 32, by: 4).map { start -> String in
                String(UInt16(String(hex[start..<start + 4]), radix: 16) ?? 0, radix: 16)
            }
            return "\(fields[9]) via \(groups.joined(separator: ":"))"
        }
        return nil
    }
}
