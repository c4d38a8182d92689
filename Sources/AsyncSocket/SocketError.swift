#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every error a ``TCPSocket`` or ``UDPSocket`` throws or reports, one case per error code of
/// GCDAsyncSocket and GCDAsyncUdpSocket (`GCDAsyncSocketError`, `GCDAsyncUdpSocketError` in
/// CocoaAsyncSocket's headers), carrying the `errno` where the operating system gave one.
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
    /// every later call of a ``TCPConnection`` throws, and what its pending calls throw. Also what a
    /// ``UDPSocket``'s sends still queued at ``UDPSocket/close()`` are failed with.
    case connectionClosed
    /// The peer closed the connection cleanly: a read returned end of file (`GCDAsyncSocketClosedError`,
    /// "Socket closed by remote peer").
    case closedByPeer
    /// Name resolution failed (`kCFStreamErrorDomainNetDB` in GCDAsyncSocket). `code` is the
    /// `getaddrinfo(3)` error (`EAI_*`).
    case hostLookupFailed(host: String, code: Int32)
    /// The peer refused the connection: nothing listens on the address (`ECONNREFUSED`, POSIX;
    /// `NSPOSIXErrorDomain` code 61 on Apple platforms, GCDAsyncSocket's `socketDidDisconnect:withError:`
    /// for a refused connect). Made by ``system(operation:errno:)``; `operation` is the call
    /// (`connect`), `errno` is `ECONNREFUSED`.
    case connectionRefused(operation: String, errno: Int32)
    /// The peer reset the connection: it closed with unread data or with `SO_LINGER` 0, or it crashed
    /// and rebooted (`ECONNRESET`, POSIX; "Connection reset by peer", GCDAsyncSocket's
    /// `NSPOSIXErrorDomain` error). `operation` is the call that saw it (`read`, `send`, `sendmsg`),
    /// `errno` is `ECONNRESET`.
    case connectionReset(operation: String, errno: Int32)
    /// A write after the connection was shut down for writing, usually because the peer reset or
    /// closed it (`EPIPE`, POSIX; sent with `MSG_NOSIGNAL`/`SO_NOSIGPIPE`, so no `SIGPIPE`).
    /// `operation` is `send` or `sendmsg`, `errno` is `EPIPE`.
    case brokenPipe(operation: String, errno: Int32)
    /// The local address is taken: another socket is bound to the port (or socket path) without
    /// `SO_REUSEPORT` (`EADDRINUSE`, POSIX; GCDAsyncSocket reports it from `acceptOnPort:error:` as an
    /// `NSPOSIXErrorDomain` error). `operation` is `bind` or `listen` (or `connect` when no ephemeral
    /// port is free), `errno` is `EADDRINUSE`.
    case addressInUse(operation: String, errno: Int32)
    /// The address is not one of this host's, or no local port is left for it (`EADDRNOTAVAIL`,
    /// POSIX). `operation` is `bind` or `connect`, `errno` is `EADDRNOTAVAIL`.
    case addressNotAvailable(operation: String, errno: Int32)
    /// No route to the peer: the network (`ENETUNREACH`) or the host (`EHOSTUNREACH`) is unreachable
    /// (POSIX; GCDAsyncSocket's `NSPOSIXErrorDomain` errors). `errno` says which of the two.
    case unreachable(operation: String, errno: Int32)
    /// The kernel gave up on the peer: connect's SYNs, retransmissions or keep-alive probes
    /// (``TCPConnection/Options/keepAlive``) went unanswered (`ETIMEDOUT`, POSIX, "Connection timed
    /// out"). Not a timeout of this library: those are ``connectTimeout``, ``readTimeout(tag:)`` and
    /// ``writeTimeout(tag:)``. `errno` is `ETIMEDOUT`.
    case connectionTimedOut(operation: String, errno: Int32)
    /// A datagram was larger than the kernel sends in one piece (`EMSGSIZE`, POSIX): over 65,507 bytes
    /// of UDP payload on IPv4 (65,535 less the 20-byte IP and 8-byte UDP headers), or over the path's
    /// MTU with fragmentation off. ``UDPSocket`` reports it for that one send; the socket stays open.
    /// `operation` is `sendmmsg`, `errno` is `EMSGSIZE`.
    case messageTooLarge(operation: String, errno: Int32)
    /// A received datagram of `size` bytes did not fit the receive size of `maxReceiveSize` bytes
    /// (``UDPSocket/maxReceiveIPv4BufferSize``, ``UDPSocket/maxReceiveIPv6BufferSize``): the kernel
    /// flagged it `MSG_TRUNC`. It is reported and discarded, never delivered cut short (GCDAsyncUdpSocket
    /// delivers the cut bytes as if whole). No `errno`: truncation is a flag, not a failure.
    case datagramTruncated(size: Int, maxReceiveSize: Int)
    /// A datagram of `size` bytes was queued for sending on a ``UDPSocket`` whose
    /// ``UDPSocket/maxSendBufferSize`` is `maxSendSize` bytes (GCDAsyncUdpSocket's
    /// `GCDAsyncUdpSocketBadParamError`, "data is too large"). Nothing was sent.
    case datagramTooLarge(size: Int, maxSendSize: Int)
    /// A send did not complete within its timeout (`GCDAsyncUdpSocketSendTimeoutError`): it waited at
    /// the head of the queue (for a name to resolve, a send filter to answer or buffer space) too long.
    /// Carries the send's tag; only that send fails.
    case sendTimeout(tag: Int)
    /// The send filter (``UDPSocket/setSendFilter(_:withQueue:isAsynchronous:)``) dropped the datagram
    /// with this tag. GCDAsyncUdpSocket reports such datagrams as sent; ``UDPSocket`` never does.
    case sendFiltered(tag: Int)
    /// Any other failed system call (`GCDAsyncSocketOtherError` / `NSPOSIXErrorDomain`): `operation`
    /// names the call (`socket`, `setsockopt`, `accept`, …) and `errno` is the value it set, for
    /// example `EMFILE` or `EACCES`. The errno values that have a case of their own above never come
    /// as this case from the library: ``system(operation:errno:)`` makes every one.
    case posix(operation: String, errno: Int32)
    /// TLS failed on the connection (``TCPSocket/startTLS(_:)``): the handshake, the peer's
    /// certificate, or the records after it. GCDAsyncSocket reports SecureTransport's `OSStatus` in
    /// `kCFStreamErrorDomainSSL`; this carries the reason in words.
    case tls(TLSError)

    /// The error for system call `operation` failing with `errno`: the case of its own for the errno
    /// values callers branch on (``connectionRefused(operation:errno:)``,
    /// ``connectionReset(operation:errno:)``, ``brokenPipe(operation:errno:)``,
    /// ``addressInUse(operation:errno:)``, ``addressNotAvailable(operation:errno:)``,
    /// ``unreachable(operation:errno:)``, ``connectionTimedOut(operation:errno:)``,
    /// ``messageTooLarge(operation:errno:)``), else ``posix(operation:errno:)``. Every system-call error of the library is made here.
    public static func system(operation: String, errno code: Int32) -> SocketError {
        switch code {
        case ECONNREFUSED: return .connectionRefused(operation: operation, errno: code)
        case ECONNRESET: return .connectionReset(operation: operation, errno: code)
        case EPIPE: return .brokenPipe(operation: operation, errno: code)
        case EADDRINUSE: return .addressInUse(operation: operation, errno: code)
        case EADDRNOTAVAIL: return .addressNotAvailable(operation: operation, errno: code)
        case ENETUNREACH, EHOSTUNREACH: return .unreachable(operation: operation, errno: code)
        case ETIMEDOUT: return .connectionTimedOut(operation: operation, errno: code)
        case EMSGSIZE: return .messageTooLarge(operation: operation, errno: code)
        default: return .posix(operation: operation, errno: code)
        }
    }

    /// The system call and `errno` of a failed system call, `nil` for the cases that have none.
    private var systemCall: (operation: String, errno: Int32)? {
        switch self {
        case .connectionRefused(let operation, let code), .connectionReset(let operation, let code),
            .brokenPipe(let operation, let code), .addressInUse(let operation, let code),
            .addressNotAvailable(let operation, let code), .unreachable(let operation, let code),
            .connectionTimedOut(let operation, let code), .messageTooLarge(let operation, let code),
            .posix(let operation, let code):
            return (operation, code)
        default:
            return nil
        }
    }

    /// The `errno` of every case that comes from a failed system call (``posix(operation:errno:)``,
    /// ``connectionRefused(operation:errno:)``, ``connectionReset(operation:errno:)`` and the other
    /// cases with an `errno`), `nil` for every other case.
    public var errno: Int32? { systemCall?.errno }

    /// The system call that failed (`connect`, `read`, `sendmsg`, `bind`, …) for the cases with an
    /// ``errno``, `nil` for every other case.
    public var operation: String? { systemCall?.operation }

    /// True for errors that mean the network or the peer broke (or never made) the connection: reset,
    /// refused, broken pipe, unreachable, timed out (in the kernel or by the connect timeout), host
    /// lookup failed, and ``posix(operation:errno:)`` with `ECONNABORTED`, `ENETDOWN`, `ENETRESET` or
    /// `EHOSTDOWN`; false for a clean close, a local decision or a local resource problem (address in
    /// use, address not available, out of descriptors).
    public var isNetworkFailure: Bool {
        switch self {
        case .connectionRefused, .connectionReset, .brokenPipe, .unreachable, .connectionTimedOut,
            .hostLookupFailed, .connectTimeout:
            return true
        case .posix(_, let code):
            return code == ECONNABORTED || code == ENETDOWN || code == ENETRESET || code == EHOSTDOWN
        default:
            return false
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
        case .tls(let error): return error.description
        case .datagramTruncated(let size, let max):
            return "a datagram of \(size) bytes did not fit the receive size of \(max) bytes"
        case .datagramTooLarge(let size, let max):
            return "a datagram of \(size) bytes is over the maximum send size of \(max) bytes"
        case .sendTimeout(let tag): return "send timed out (tag \(tag))"
        case .sendFiltered(let tag): return "the send filter dropped the datagram (tag \(tag))"
        case .hostLookupFailed(let host, let code):
            return "host lookup of \(host) failed: \(String(cString: gai_strerror(code)))"
        case .connectionRefused(let operation, let code), .connectionReset(let operation, let code),
            .brokenPipe(let operation, let code), .addressInUse(let operation, let code),
            .addressNotAvailable(let operation, let code), .unreachable(let operation, let code),
            .connectionTimedOut(let operation, let code), .messageTooLarge(let operation, let code),
            .posix(let operation, let code):
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
