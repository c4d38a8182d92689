#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local addresses an interface description names, as GCDAsyncSocket's `interface` parameters take
/// them: an interface name (`"lo"`, `"eth0"`, `"en1"`), a numeric address (`"127.0.0.1"`, `"::1"`,
/// `"[::1]"`), or `"localhost"` / `"loopback"`, each optionally followed by `":port"` (`"en1:8082"`,
/// `"192.168.4.34:8082"`, `"[::1]:8082"`).
enum InterfaceAddresses {
    /// The addresses of `interface` with the port it names, or `port` when it names none.
    /// - Throws: ``SocketError/badParam(_:)`` for an interface with no IPv4 or IPv6 address.
    static func resolve(_ interface: String, port: UInt16) throws(SocketError) -> [SocketAddress] {
        let (name, explicitPort) = split(interface)
        let port = explicitPort ?? port
        if name == "localhost" || name == "loopback" {
            return ["127.0.0.1", "::1"].compactMap { SocketAddress(ipAddress: $0, port: port) }
        }
        if let literal = SocketAddress(ipAddress: name, port: port) { return [literal] }
        let named = addresses(ofInterfaceNamed: name, port: port)
        if !named.isEmpty { return named }
        if let resolved = try? Resolver.resolve(host: name, port: port, passive: true) { return resolved }
        throw SocketError.badParam("unknown interface \(interface)")
    }

    /// Splits `"name:port"` and `"[v6]:port"`; a bare IPv6 literal has no port.
    static func split(_ interface: String) -> (name: String, port: UInt16?) {
        if interface.hasPrefix("["), let close = interface.firstIndex(of: "]") {
            let name = String(interface[interface.index(after: interface.startIndex)..<close])
            let rest = interface[interface.index(after: close)...]
            return (name, rest.hasPrefix(":") ? UInt16(rest.dropFirst()) : nil)
        }
        let parts = interface.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let port = UInt16(parts[1]) { return (String(parts[0]), port) }
        return (interface, nil)
    }

    /// IPv4 and IPv6 addresses of the interface called `name` (`getifaddrs(3)`).
    static func addresses(ofInterfaceNamed name: String, port: UInt16) -> [SocketAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            guard String(cString: entry.pointee.ifa_name) == name, let raw = entry.pointee.ifa_addr else { continue }
            let family = Int32(raw.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
            guard let address = SocketAddress(raw, length: length) else { continue }
            let withPort = address.withPort(port)
            if !found.contains(withPort) { found.append(withPort) }
        }
        return found
    }
}
