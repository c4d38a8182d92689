import CAsyncSocketShims
import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Host name resolution with `getaddrinfo(3)`. Numeric addresses are parsed on the calling thread;
/// names are resolved on a global dispatch queue, so an event loop never blocks on DNS.
public enum Resolver {
    /// Resolves `host` to its TCP addresses for `port`, IPv4 and IPv6 in the order `getaddrinfo(3)`
    /// returns them (RFC 6724 preference), duplicates removed. Blocks the calling thread.
    ///
    /// - Parameters:
    ///   - host: a name (`"localhost"`, `"example.com"`) or a numeric IPv4/IPv6 literal.
    ///   - port: host byte order.
    ///   - passive: `AI_PASSIVE`, for addresses to bind to rather than connect to.
    /// - Throws: ``SocketError/hostLookupFailed(host:code:)`` with the `EAI_*` code.
    public static func resolve(host: String, port: UInt16, passive: Bool = false) throws(SocketError) -> [SocketAddress] {
        if let literal = SocketAddress(ipAddress: host, port: port) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else { throw SocketError.hostLookupFailed(host: host, code: code) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr,
                let address = SocketAddress(socketAddress, length: entry.pointee.ai_addrlen),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw SocketError.hostLookupFailed(host: host, code: EAI_NONAME) }
        return addresses
    }

    /// Resolves off the calling thread: literals at once on the calling thread, names on a global
    /// dispatch queue. `completion` runs on that queue (or the calling thread for literals).
    static func resolveAsync(
        host: String,
        port: UInt16,
        completion: @escaping @Sendable (Result<[SocketAddress], SocketError>) -> Void
    ) {
        if let literal = SocketAddress(ipAddress: host, port: port) {
            completion(.success([literal]))
            return
        }
        DispatchQueue.global().async {
            completion(Result { () throws(SocketError) in try resolve(host: host, port: port) })
        }
    }
}
