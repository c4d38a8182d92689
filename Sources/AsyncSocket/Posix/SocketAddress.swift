import CAsyncSocketShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address: host and port, as the kernel takes them (`sockaddr_in` /
/// `sockaddr_in6`). The port is in host byte order here and converted to network byte order inside.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        /// IPv4 (`AF_INET`).
        case inet
        /// IPv6 (`AF_INET6`).
        case inet6
    }

    private var storage: sockaddr_storage

    /// The address family of this address.
    public var family: Family { Int32(storage.ss_family) == AF_INET6 ? .inet6 : .inet }

    /// The TCP or UDP port in host byte order.
    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == .inet6
                ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The host as a numeric string, `"127.0.0.1"` or `"::1"` (`inet_ntop(3)`).
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let capacity = socklen_t(text.count)
        var copy = storage
        let ok: Bool = withUnsafeMutableBytes(of: &copy) { raw in
            if family == .inet6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                return inet_ntop(AF_INET6, &address, &text, capacity) != nil
            }
            var address = raw.load(as: sockaddr_in.self).sin_addr
            return inet_ntop(AF_INET, &address, &text, capacity) != nil
        }
        guard ok else { return "?" }
        return text.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { String(cString: $0) } ?? "?" }
    }

    /// `host:port`, or `[host]:port` for IPv6.
    public var description: String { family == .inet6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The length of the underlying `sockaddr` in bytes.
    var length: socklen_t {
        socklen_t(family == .inet6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// An address from a numeric IPv4 (`"127.0.0.1"`) or IPv6 (`"::1"`) literal and a port, or `nil`
    /// when `host` is not a literal (`inet_pton(3)`). Never resolves names.
    public init?(ipAddress host: String, port: UInt16) {
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
            self.storage = storage
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
            self.storage = storage
            return
        }
        return nil
    }

    /// The wildcard address of `family` (`INADDR_ANY` / `in6addr_any`) on `port`.
    static func any(_ family: Family, port: UInt16) -> SocketAddress {
        // Both literals always parse.
        SocketAddress(ipAddress: family == .inet6 ? "::" : "0.0.0.0", port: port)!
    }

    /// An address copied from a `sockaddr` the kernel filled in, or `nil` for a family other than
    /// IPv4 and IPv6.
    init?(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        let family = Int32(pointer.pointee.sa_family)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(Int(length), target.count)))
        }
        self.storage = storage
    }

    /// Calls `body` with this address as a `sockaddr` pointer and its length.
    func withSockAddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        var copy = storage
        let length = self.length
        return try withUnsafeBytes(of: &copy) { raw throws(E) -> R in
            // A sockaddr_storage is suitably sized and aligned for every sockaddr type.
            let pointer = raw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: sockaddr.self)
            return try body(pointer, length)
        }
    }

    /// Reads an address with `getsockname(2)` or `getpeername(2)`.
    static func read(
        _ fd: Int32,
        _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard call(fd, address, &length) == 0 else { return nil }
                return SocketAddress(address, length: length)
            }
        }
    }

    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.family == rhs.family && lhs.host == rhs.host && lhs.port == rhs.port
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
    }
}
