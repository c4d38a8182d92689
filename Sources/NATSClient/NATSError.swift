/// What a NATSClient call can fail with. Every case reads as words (``description``), never as a
/// bare code.
public enum NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The connection is closed, or libnats had no server to send the call to (`NATS_CONNECTION_CLOSED`,
    /// `NATS_CONNECTION_DISCONNECTED`, `NATS_NOT_YET_CONNECTED`).
    case notConnected
    /// No answer within the call's timeout (`NATS_TIMEOUT`): a request, a flush, a JetStream API call.
    case timeout
    /// The server knows no subscriber for a request's subject (`NATS_NO_RESPONDERS`, the server's
    /// 503 status). For a JetStream call: no stream listens on the subject, or JetStream is not enabled.
    case noResponders
    /// Any other libnats failure: its `natsStatus` number and `natsStatus_GetText`, followed by the
    /// more specific text libnats left for the calling thread (`nats_GetLastError`) when it has one.
    case status(code: Int32, text: String)
    /// The JetStream API refused the call: its error code (libnats' `jsErrCode`, the server's
    /// `err_code`, e.g. 10059 "stream not found") and the server's description.
    case jetStream(errorCode: Int, text: String)
    /// A compare-and-set write lost: the subject's (KV key's) last sequence was not the expected one
    /// (JetStream error 10071, `JSStreamWrongLastSequenceErr`).
    case wrongLastSequence
    /// ``KeyValueBucket/create(_:_:)`` on a key that has a value.
    case keyExists
    /// An argument this API or libnats refuses before asking the server (an empty subject, a key with
    /// characters KV does not allow, a timeout that is not positive, ...).
    case invalid(String)

    /// The error in words, with the code where there is one.
    public var description: String {
        switch self {
        case .notConnected: "not connected to a NATS server"
        case .timeout: "timed out waiting for the NATS server"
        case .noResponders: "no responders for the request's subject"
        case .status(let code, let text): "libnats error \(code): \(text)"
        case .jetStream(let errorCode, let text): "JetStream error \(errorCode): \(text)"
        case .wrongLastSequence: "wrong last sequence: the subject changed since the expected revision (JetStream error 10071)"
        case .keyExists: "the key already has a value"
        case .invalid(let text): "invalid argument: \(text)"
        }
    }
}
