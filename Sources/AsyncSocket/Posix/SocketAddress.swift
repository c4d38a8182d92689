import Foundation
import CAsyncSocketShims
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A socket address as the kernel takes it: IPv4 or IPv6 host and port (`sockaddr_in` /
/// `sockaddr_in6`), or a Unix-domain socket path (`sockaddr_un`, unix(7)). Ports are in host byte order
/// here and converted to network byte order inside.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        /// IPv4 (`AF_INET`).
        case inet
        /// IPv6 (`AF_INET6`).
        case inet6
        /// A Unix-domain socket (`AF_UNIX`), named by a file-system path.
        case unix
    }

    /// An IPv4 or IPv6 address's bytes (a `sockaddr_in` or `sockaddr_in6`, 28 bytes at most) inline;
    /// a Unix-domain address's (up to 110 bytes) in a box, so that the common IP address keeps a
    /// connection's memory small.
    private var inlineBytes = sockaddr_in6()
    private var unixBytes: UnixAddressBytes?
    private let storedLength: socklen_t

    private final class UnixAddressBytes: @unchecked Sendable {
        // Unchecked Sendable: never mutated after init.
        let storage: sockaddr_storage
        init(_ storage: sockaddr_storage) { self.storage = storage }
    }

    private init(storage: sockaddr_storage, length: socklen_t) {
        storedLength = length
        self.storage = storage
    }

    /// The address as a `sockaddr_storage`.
    private var storage: sockaddr_storage {
        get {
            if let unixBytes { return unixBytes.storage }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: inlineBytes, as: sockaddr_in6.self) }
            return storage
        }
        set {
            if Int32(newValue.ss_family) == AF_UNIX {
                unixBytes = UnixAddressBytes(newValue)
            } else {
                unixBytes = nil
                inlineBytes = withUnsafeBytes(of: newValue) { $0.load(as: sockaddr_in6.self) }
            }
        }
    }

    /// The address family of this address.
    public var family: Family {
        switch Int32(storage.ss_family) {
        case AF_INET6: return .inet6
        case AF_UNIX: return .unix
        default: return .inet
        }
    }

    /// The TCP or UDP port in host byte order; 0 for a Unix-domain address.
    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case .inet6: return UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            case .inet: return UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
            case .unix: return 0
            }
        }
    }

    /// The host as a numeric string, `"127.0.0.1"` or `"::1"` (`inet_ntop(3)`); the path for a
    /// Unix-domain address.
    public var host: String {
        if family == .unix { return path ?? "" }
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

    /// The file-system path of a Unix-domain address, `nil` for IP addresses (and for unnamed Unix
    /// sockets).
    public var path: String? {
        guard family == .unix else { return nil }
        return withUnsafeBytes(of: storage) { raw -> String? in
            let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
            let bytes = raw[offset..<min(raw.count, Int(storedLength))].prefix { $0 != 0 }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }

    /// `host:port`, `[host]:port` for IPv6, the path for a Unix-domain address.
    public var description: String {
        switch family {
        case .inet6: return "[\(host)]:\(port)"
        case .inet: return "\(host):\(port)"
        case .unix: return path ?? "(unnamed)"
        }
    }

    /// The length of the underlying `sockaddr` in bytes.
    var length: socklen_t { storedLength }

    /// An address from a numeric IPv4 (`"127.0.0.1"`) or IPv6 (`"::1"`) literal and a port, or `nil`
    /// when `host` is not a literal (`inet_pton(3)`). Never resolves names.
    public init?(ipAddress host: String, port: UInt16) {
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in>.size))
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
            return
        }
        return nil
    }

    /// A Unix-domain address for `path`, or `nil` when the path is empty or longer than `sun_path`
    /// holds (107 bytes on Linux, 103 on Apple platforms, plus the terminating zero).
    public init?(unixDomainSocketPath path: String) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_un.self) }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        self.init(storage: storage, length: socklen_t(offset + bytes.count + 1))
    }

    /// The wildcard address of `family` (`INADDR_ANY` / `in6addr_any`) on `port`.
    static func any(_ family: Family, port: UInt16) -> SocketAddress {
        // Both literals always parse.
        SocketAddress(ipAddress: family == .inet6 ? "::" : "0.0.0.0", port: port)!
    }

    /// An address copied from a `sockaddr` the kernel filled in, or `nil` for a family other than
    /// IPv4, IPv6 and Unix-domain.
    init?(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        let family = Int32(pointer.pointee.sa_family)
        guard family == AF_INET || family == AF_INET6 || family == AF_UNIX else { return nil }
        var storage = sockaddr_storage()
        let count = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count))
        }
        self.init(storage: storage, length: socklen_t(count))
    }

    /// This address with another port (IP addresses only; the scope of a link-local IPv6 address is kept).
    func withPort(_ port: UInt16) -> SocketAddress {
        var copy = self
        withUnsafeMutableBytes(of: &copy.storage) { raw in
            switch family {
            case .inet:
                raw.storeBytes(
                    of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_port) ?? 2, as: UInt16.self)
            case .inet6:
                raw.storeBytes(
                    of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_port) ?? 2, as: UInt16.self)
            case .unix: break
            }
        }
        return copy
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

extension SocketAddress {
    /// The kernel's socket domain for this address (`AF_INET`, `AF_INET6`, `AF_UNIX`).
    var domain: Int32 {
        switch family {
        case .inet: return AF_INET
        case .inet6: return AF_INET6
        case .unix: return AF_UNIX
        }
    }

    /// An address from the bytes of a `sockaddr` (`sockaddr_in`, `sockaddr_in6` or `sockaddr_un`), as
    /// GCDAsyncSocket's `hostFromAddress:` / `portFromAddress:` take them; `nil` when the bytes are too
    /// short or of another family.
    public init?(sockaddr data: Data) {
        guard data.count >= MemoryLayout<sa_family_t>.size + 1 else { return nil }
        var storage = sockaddr_storage()
        let count = min(data.count, MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            data.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        let minimum: Int
        switch Int32(storage.ss_family) {
        case AF_INET: minimum = MemoryLayout<sockaddr_in>.size
        case AF_INET6: minimum = MemoryLayout<sockaddr_in6>.size
        case AF_UNIX: minimum = MemoryLayout<sa_family_t>.size
        default: return nil
        }
        guard count >= minimum else { return nil }
        let parsed = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: socklen_t(count)) }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The bytes of the underlying `sockaddr` (GCDAsyncSocket's `connectedAddress` / `localAddress` data).
    public var sockaddrData: Data {
        withUnsafeBytes(of: storage) { Data($0[..<Int(length)]) }
    }

    /// True for an IPv4 address.
    public var isIPv4: Bool { family == .inet }
    /// True for an IPv6 address.
    public var isIPv6: Bool { family == .inet6 }
}
