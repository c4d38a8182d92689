extension PerMessageDeflate {
    /// Why an incoming compressed message could not be inflated. Either way the connection is to be failed
    /// (RFC 6455 §7.1.7): a message cannot be skipped, since with context takeover the history later
    /// messages refer to would be wrong;
    /// ``closeCode`` is the status code to close with (RFC 6455 §7.4.1).
    public enum DecompressionError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
        /// The inflated message would be longer than `maxBytes` (the caller's message limit): a
        /// decompression bomb or simply too big a message. Inflating stopped at the limit.
        case messageTooBig(maxBytes: Int)
        /// The payload is not valid deflate data, or does not end where a message must (on an empty stored
        /// block once `00 00 ff ff` is appended, §7.2.2); carries zlib's message and code, or what was wrong.
        case corruptData(String)

        /// The close code to fail the connection with:
        /// - 1009 "message too big" for ``messageTooBig(maxBytes:)`` (RFC 6455 §7.4.1);
        /// - 1007 for ``corruptData(_:)``. RFC 7692 names no close code for a payload that does not
        ///   inflate; RFC 6455 §7.4.1 gives 1007 to "data within a message that was not consistent with
        ///   the type of the message", and here RSV1 says deflate data and the payload is not. Node's `ws`
        ///   closes with 1007 too; 1002 "protocol error" stays for faults of the framing itself.
        public var closeCode: UInt16 {
            switch self {
            case .messageTooBig: 1009
            case .corruptData: 1007
            }
        }

        /// One line in English, e.g. "inflated message exceeds the maximum of 1024 bytes".
        public var description: String {
            switch self {
            case let .messageTooBig(maxBytes): "inflated message exceeds the maximum of \(maxBytes) bytes"
            case let .corruptData(reason): "invalid compressed message: \(reason)"
            }
        }
    }
}
