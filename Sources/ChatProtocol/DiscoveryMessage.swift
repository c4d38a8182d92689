import AsyncSocket
import Foundation

/// Constants of the LAN discovery protocol (docs/PROTOCOL.md, "Finding the server"): how an
/// `im-client --discover` finds an `im-server` without being told its host and port.
///
/// A client sends a ``DiscoveryQuery`` to a multicast group; every server that has joined the group
/// answers with a ``DiscoveryAnswer`` sent by unicast to the query's source address. Both are binary,
/// every integer big-endian (network byte order).
public enum DiscoveryProtocol {
    /// The four bytes every discovery datagram starts with: `49 4D 43 44`, ASCII "IMCD" (IM Chat
    /// Discovery).
    public static let magic: [UInt8] = [0x49, 0x4D, 0x43, 0x44]
    /// The protocol version this code speaks and accepts: 1. A datagram of another version is ignored.
    public static let version: UInt8 = 1
    /// The default multicast group: 239.255.77.77, in the IPv4 Local Scope 239.255.0.0/16 (RFC 2365
    /// §6.1: administratively scoped, never forwarded beyond the site, assigned by no registry; SSDP's
    /// 239.255.255.250 lives there too). 77 is ASCII "M".
    public static let defaultGroup = "239.255.77.77"
    /// The default UDP port of the group: 7777, the same number as the chat's TCP port
    /// (``defaultChatPort``; UDP and TCP ports are separate). Not registered with IANA; configurable.
    public static let defaultPort: UInt16 = 7777
    /// Longest server name, in bytes of UTF-8: 64.
    public static let maxNameBytes = 64
    /// Longest advertised host, in bytes of UTF-8: 255 (a one-byte length; DNS names are at most 253).
    public static let maxHostBytes = 255
    /// The largest datagram either side reads, in bytes: 1,024 (the largest valid answer is
    /// 22 + 255 + 64 = 341 bytes). A longer datagram is discarded by the socket and counted as ignored.
    public static let maxDatagramBytes = 1024

    /// Whether `address` is an IPv4 multicast address, 224.0.0.0/4 (RFC 5771).
    public static func isIPv4Multicast(_ address: SocketAddress) -> Bool {
        guard address.isIPv4, let first = address.host.split(separator: ".").first.flatMap({ UInt8($0) }) else { return false }
        return (224...239).contains(first)
    }

    /// Whether `host` is a numeric loopback address (127.0.0.0/8, ::1).
    package static func isLoopback(_ host: String) -> Bool {
        host.hasPrefix("127.") || host == "::1"
    }
}

/// The kind byte (offset 5) of a discovery datagram.
public enum DiscoveryKind: UInt8, Sendable {
    /// A client looking for servers (``DiscoveryQuery``).
    case query = 1
    /// A server answering one query (``DiscoveryAnswer``).
    case answer = 2
}

/// Why a datagram is not a valid discovery message. Datagrams that fail are ignored and counted,
/// never answered.
public enum DiscoveryDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The first four bytes are not ``DiscoveryProtocol/magic`` (or there are fewer than four).
    case badMagic
    /// The version byte is not ``DiscoveryProtocol/version``.
    case unsupportedVersion(UInt8)
    /// The kind byte is not the kind expected here (a query where an answer is wanted, an unknown kind).
    case unexpectedKind(UInt8)
    /// The datagram ends in the middle of a field: `size` bytes, at least `needed` required so far.
    case truncated(size: Int, needed: Int)
    /// Bytes follow the last field: `count` of them.
    case trailingBytes(count: Int)
    /// A string field (`"name"`, `"host"`) is longer than its maximum, in bytes.
    case fieldTooLong(field: String, bytes: Int, max: Int)
    /// A string field is not valid UTF-8.
    case invalidUTF8(field: String)
    /// An answer advertises TCP port 0 or an empty server name.
    case invalidAnswer(String)

    /// One line for a log: `truncated: 10 bytes, at least 14 needed`.
    public var description: String {
        switch self {
        case .badMagic: return "not a discovery datagram (bad magic)"
        case .unsupportedVersion(let version): return "unsupported discovery version \(version)"
        case .unexpectedKind(let kind): return "unexpected discovery kind \(kind)"
        case .truncated(let size, let needed): return "truncated: \(size) bytes, at least \(needed) needed"
        case .trailingBytes(let count): return "\(count) bytes after the last field"
        case .fieldTooLong(let field, let bytes, let max): return "\(field) is \(bytes) bytes, at most \(max) allowed"
        case .invalidUTF8(let field): return "\(field) is not UTF-8"
        case .invalidAnswer(let why): return "invalid answer: \(why)"
        }
    }
}

/// A client's question "which chat servers are there?", sent to the discovery group.
///
/// ```
///  offset size field
///  0      4    magic 49 4D 43 44 ("IMCD")
///  4      1    version 01
///  5      1    kind 01 (query)
///  6      8    nonce, UInt64 big-endian, random per search
///  14     1    name length n, 0...64
///  15     n    wanted server name, UTF-8; n = 0: any server
/// ```
/// 15 + n bytes, nothing after the name.
public struct DiscoveryQuery: Sendable, Equatable {
    /// A random number the answers must echo, so a client takes only answers to its own search.
    public var nonce: UInt64
    /// Only a server of this name should answer; empty: any server. At most 64 bytes of UTF-8.
    public var serverName: String

    /// A query; `serverName` must be at most ``DiscoveryProtocol/maxNameBytes`` bytes of UTF-8
    /// (a precondition: check user input first with ``DiscoveryQuery/isValidName(_:)``).
    public init(nonce: UInt64, serverName: String = "") {
        precondition(serverName.utf8.count <= DiscoveryProtocol.maxNameBytes, "a server name is at most 64 bytes of UTF-8")
        self.nonce = nonce
        self.serverName = serverName
    }

    /// Whether `name` fits the name field: at most 64 bytes of UTF-8 and no control characters.
    public static func isValidName(_ name: String) -> Bool {
        name.utf8.count <= DiscoveryProtocol.maxNameBytes
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The datagram, as drawn above.
    public var encoded: Data {
        var writer = DiscoveryWriter(kind: .query)
        writer.append(nonce)
        writer.appendString(serverName)
        return writer.data
    }

    /// Parses a datagram.
    /// - Throws: ``DiscoveryDecodingError`` for anything but exactly one valid query.
    public init(decoding data: Data) throws(DiscoveryDecodingError) {
        var reader = try DiscoveryReader(data, kind: .query)
        let nonce = try reader.uint64()
        let name = try reader.string(field: "name", max: DiscoveryProtocol.maxNameBytes)
        try reader.expectEnd()
        self.init(nonce: nonce, serverName: name)
    }
}

/// A server's answer to one ``DiscoveryQuery``, sent by unicast to the query's source address and port.
///
/// ```
///  offset  size field
///  0       4    magic 49 4D 43 44 ("IMCD")
///  4       1    version 01
///  5       1    kind 02 (answer)
///  6       8    nonce, echoed from the query
///  14      2    TCP port of the chat, UInt16 big-endian, not 0
///  16      4    users online, UInt32 big-endian
///  20      1    host length h, 0...255
///  21      h    host to connect to, UTF-8 (a numeric address); h = 0: the answer's source address
///  21+h    1    name length n, 1...64
///  22+h    n    server name, UTF-8
/// ```
/// 22 + h + n bytes, nothing after the name.
public struct DiscoveryAnswer: Sendable, Equatable {
    /// The nonce of the query answered.
    public var nonce: UInt64
    /// The chat's TCP port.
    public var port: UInt16
    /// Users logged in when the answer was made: the client's measure of load.
    public var onlineUsers: UInt32
    /// The host to connect to; empty when the server listens on every interface, meaning "the address
    /// this answer came from" (the server's address on the client's network).
    public var host: String
    /// The server's name (``DiscoveryResponder/Configuration/serverName``).
    public var serverName: String

    /// An answer; `host` must be at most 255 and `serverName` 1 to 64 bytes of UTF-8, and `port` not 0
    /// (preconditions).
    public init(nonce: UInt64, port: UInt16, onlineUsers: UInt32, host: String, serverName: String) {
        precondition(port != 0, "an answer advertises a real port")
        precondition(host.utf8.count <= DiscoveryProtocol.maxHostBytes, "a host is at most 255 bytes of UTF-8")
        precondition((1...DiscoveryProtocol.maxNameBytes).contains(serverName.utf8.count), "a server name is 1 to 64 bytes of UTF-8")
        self.nonce = nonce
        self.port = port
        self.onlineUsers = onlineUsers
        self.host = host
        self.serverName = serverName
    }

    /// The datagram, as drawn above.
    public var encoded: Data {
        var writer = DiscoveryWriter(kind: .answer)
        writer.append(nonce)
        writer.append(port)
        writer.append(onlineUsers)
        writer.appendString(host)
        writer.appendString(serverName)
        return writer.data
    }

    /// Parses a datagram.
    /// - Throws: ``DiscoveryDecodingError`` for anything but exactly one valid answer.
    public init(decoding data: Data) throws(DiscoveryDecodingError) {
        var reader = try DiscoveryReader(data, kind: .answer)
        let nonce = try reader.uint64()
        let port = try reader.uint16()
        let online = try reader.uint32()
        let host = try reader.string(field: "host", max: DiscoveryProtocol.maxHostBytes)
        let name = try reader.string(field: "name", max: DiscoveryProtocol.maxNameBytes)
        try reader.expectEnd()
        guard port != 0 else { throw .invalidAnswer("port 0") }
        guard !name.isEmpty else { throw .invalidAnswer("empty server name") }
        self.init(nonce: nonce, port: port, onlineUsers: online, host: host, serverName: name)
    }
}

/// Builds a discovery datagram: the six-byte head, then big-endian fields.
private struct DiscoveryWriter {
    var data: Data

    init(kind: DiscoveryKind) {
        data = Data(DiscoveryProtocol.magic)
        data.append(DiscoveryProtocol.version)
        data.append(kind.rawValue)
    }

    mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    /// A one-byte length, then the UTF-8 bytes (callers checked the length fits).
    mutating func appendString(_ string: String) {
        let bytes = Array(string.utf8)
        data.append(UInt8(bytes.count))
        data.append(contentsOf: bytes)
    }
}

/// Reads a discovery datagram field by field, checking every length against what arrived.
private struct DiscoveryReader {
    let bytes: [UInt8]
    var offset = 0

    /// Checks the six-byte head: magic, version, kind.
    init(_ data: Data, kind: DiscoveryKind) throws(DiscoveryDecodingError) {
        bytes = [UInt8](data)
        guard bytes.count >= 4, Array(bytes[0..<4]) == DiscoveryProtocol.magic else { throw .badMagic }
        guard bytes.count >= 6 else { throw .truncated(size: bytes.count, needed: 6) }
        guard bytes[4] == DiscoveryProtocol.version else { throw .unsupportedVersion(bytes[4]) }
        guard bytes[5] == kind.rawValue else { throw .unexpectedKind(bytes[5]) }
        offset = 6
    }

    mutating func take(_ count: Int) throws(DiscoveryDecodingError) -> ArraySlice<UInt8> {
        guard bytes.count - offset >= count else { throw .truncated(size: bytes.count, needed: offset + count) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws(DiscoveryDecodingError) -> Integer {
        try take(MemoryLayout<Integer>.size).reduce(0) { $0 << 8 | Integer($1) }
    }

    mutating func uint16() throws(DiscoveryDecodingError) -> UInt16 { try integer(UInt16.self) }
    mutating func uint32() throws(DiscoveryDecodingError) -> UInt32 { try integer(UInt32.self) }
    mutating func uint64() throws(DiscoveryDecodingError) -> UInt64 { try integer(UInt64.self) }

    /// A one-byte length and that many bytes of UTF-8, at most `max`.
    mutating func string(field: String, max: Int) throws(DiscoveryDecodingError) -> String {
        let length = Int(try take(1).first ?? 0)
        guard length <= max else { throw .fieldTooLong(field: field, bytes: length, max: max) }
        let raw = try take(length)
        guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(field: field) }
        return string
    }

    func expectEnd() throws(DiscoveryDecodingError) {
        guard offset == bytes.count else { throw .trailingBytes(count: bytes.count - offset) }
    }
}
