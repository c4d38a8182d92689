#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every error a ``TCPSocket`` throws or reports, one case per error code of GCDAsyncSocket
/// (`GCDAsyncSocketError` in CocoaAsyncSocket's `GCDAsyncSocket.h`), carrying the `errno` where the
/// operating system gave one.
///
/// Errors from ``TCPSocketDelegate/socketDidDisconnect(_:withError:)`` say why a connection ended: a
/// `nil` error there means this side called ``TCPSocket/disconnect()``; anything else is one of these.
public enum SocketError: Error, Equatable, Sendable {
    /// The socket is not in a state that allows the call (`GCDAsyncSocketBadConfigError`), for example
    /// connecting a socket that is already connected or listening.
    case badConfig(String)
    /// An argument is invalid (`GCDAsyncSocketBadParamError`), for example a port out of range.
    case badParam(String)
    /// The connection was not established within the connect timeout, name resolution included
    /// (`GCDAsyncSocketConnectTimeoutError`).
    case connectTimeout
    /// A read did not complete within its timeout (`GCDAsyncSocketReadTimeoutError`). Carries the read's tag.
    case readTimeout(tag: Int)
    /// A write did not complete within its timeout (`GCDAsyncSocketWriteTimeoutError`). Carries the write's tag.
    case writeTimeout(tag: Int)
    /// A read to a delimiter reached its maximum length, in bytes, without finding the delimiter
    /// (`GCDAsyncSocketReadMaxedOutError`).
    case readMaxedOut(maxLength: Int)
    /// The bytes received cannot be valid for the read's ``ByteConsumer`` (a frame decoder): carries
    /// the error it threw, typed (SocketFraming's decoders throw `FramingError`).
    case decodingFailed(DecodingFailure)
    /// The call needs a connection (or a connect in progress) and the socket has none
    /// (`GCDAsyncSocketBadConfigError` in GCDAsyncSocket, which drops such reads and writes silently).
    case notConnected
    /// A connect or listen was asked of a socket that is already connected, connecting or listening
    /// (`GCDAsyncSocketBadConfigError`: "Attempting to connect while connected or accepting").
    case alreadyConnected
    /// A read or write was queued after a disconnect-after call (``TCPSocket/disconnectAfterReading()``
    /// and its siblings): the socket is on its way out.
    case disconnecting
    /// A write was queued after this side closed its write direction
    /// (``TCPSocket/closeWriteStreamAfterWriting()``, ``TCPConnection/closeWrite()``).
    case writeStreamClosed
    /// This side closed the connection (``TCPConnection/close()``, ``TCPSocket/disconnect()``): what
    /// every later call of a ``TCPConnection`` throws, and what its pending calls throw.
    case connectionClosed
    /// The peer closed the connection cleanly: a read returned end of file (`GCDAsyncSocketClosedError`,
    /// "Socket closed by remote peer").
    case closedByPeer
    /// Name resolution failed (`kCFStreamErrorDomainNetDB` in GCDAsyncSocket). `code` is the
    /// `getaddrinfo(3)` error (`EAI_*`).
    case hostLookupFailed(host: String, code: Int32)
    /// A system call failed (`GCDAsyncSocketOtherError` / `NSPOSIXErrorDomain`): `operation` names the
    /// call (`connect`, `read`, `sendmsg`, …) and `errno` is the value it set, for example `ECONNRESET`
    /// (connection reset by peer), `ECONNREFUSED`, `ENETUNREACH`, `EPIPE`.
    case posix(operation: String, errno: Int32)

    /// The `errno` carried by ``posix(operation:errno:)``, `nil` for every other case.
    public var errno: Int32? {
        if case .posix(_, let code) = self { return code }
        return nil
    }

    /// True for errors that mean the network or the peer broke the connection (reset, unreachable,
    /// refused, broken pipe, timed out in the kernel), as opposed to a clean close or a local decision.
    public var isNetworkFailure: Bool {
        switch self {
        case .posix, .hostLookupFailed, .connectTimeout: return true
        default: return false
        }
    }
}

extension SocketError: CustomStringConvertible {
    /// A sentence in the style of Go's `OpError`: "connect: Connection refused (errno 111)".
    public var description: String {
        switch self {
        case .badConfig(let why): return "bad configuration: \(why)"
        case .badParam(let why): return "bad parameter: \(why)"
        case .connectTimeout: return "connect timed out"
        case .readTimeout(let tag): return "read timed out (tag \(tag))"
        case .writeTimeout(let tag): return "write timed out (tag \(tag))"
        case .readMaxedOut(let max): return "read reached its maximum length of \(max) bytes without the delimiter"
        case .closedByPeer: return "socket closed by remote peer"
        case .decodingFailed(let failure): return "decoding failed: \(failure)"
        case .notConnected: return "the socket is not connected or connecting"
        case .alreadyConnected: return "the socket is already connected, connecting or listening"
        case .disconnecting: return "the socket is disconnecting"
        case .writeStreamClosed: return "the write stream is closed"
        case .connectionClosed: return "the connection was closed"
        case .hostLookupFailed(let host, let code):
            return "host lookup of \(host) failed: \(String(cString: gai_strerror(code)))"
        case .posix(let operation, let code):
            return "\(operation): \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}

/// The error a ``ByteConsumer`` (a frame decoder) threw, carried by ``SocketError/decodingFailed(_:)``
/// so that it keeps its type: `failure.underlying as? FramingError` gives SocketFraming's case back.
/// Two failures are equal when their errors have the same type and the same description.
public struct DecodingFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The consumer's own error.
    public let underlying: any Error

    /// Wraps `error`.
    public init(_ error: any Error) {
        underlying = error
    }

    public var description: String { "\(underlying)" }

    public static func == (lhs: DecodingFailure, rhs: DecodingFailure) -> Bool {
        type(of: lhs.underlying) == type(of: rhs.underlying) && lhs.description == rhs.description
    }
}
