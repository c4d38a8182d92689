extension PerMessageDeflate {
    /// Why an incoming compressed message could not be inflated. Either way the connection is to be failed
    /// (RFC 7692 §7.2.2 leaves no way to skip a message: the history of later messages would be wrong);
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
        /// - 1007 "invalid frame payload data" for ``corruptData(_:)``: RFC 7692 §7.2.2 and §8 say only
        ///   to fail the connection; the message's data is inconsistent with its type (RSV1 claims deflate
        ///   data), the case RFC 6455 §7.4.1 gives 1007 for, and the choice of Node's `ws`, as for invalid
        ///   UTF-8 (1002 "protocol error" is kept for framing faults).
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
