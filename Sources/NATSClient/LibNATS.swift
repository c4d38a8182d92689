import CNATS

/// libnats' status and error numbers in this API's terms, and the unit conversions its calls need.
enum LibNATS {
    /// Opens the library once, before the first connection (`nats_Open(0)`): libnats' mutexes then
    /// block at once when taken, instead of first trying 2,000 times in a busy loop (its default,
    /// `gLockSpinCount` in nats.c). On this project's 2-core machine that spinning was 8 % of a
    /// cluster node's CPU while 16 store lanes made requests on one connection (docs/BENCHMARKS.md,
    /// "Issue 35 §3"): a spinning thread holds the core the lock's owner needs.
    /// `NATS_OK` or the status of a failed open (which the first connect then reports too).
    static let opened: natsStatus = nats_Open(0)

    /// JetStream's "wrong last sequence" (`JSStreamWrongLastSequenceErr`, status.h).
    static let wrongLastSequence = Int(JSStreamWrongLastSequenceErr.rawValue)
    /// JetStream's "no message found" (`JSNoMessageFoundErr`, status.h).
    static let noMessageFound = Int(JSNoMessageFoundErr.rawValue)
    /// JetStream's "stream name already in use" (`JSStreamNameExistErr`, status.h).
    static let streamNameExists = Int(JSStreamNameExistErr.rawValue)

    /// Throws the error for `status` unless it is `NATS_OK`.
    static func check(_ status: natsStatus) throws(NATSError) {
        guard status == NATS_OK else { throw error(status) }
    }

    /// Throws the error for a JetStream call's `status` and `code` unless the status is `NATS_OK`.
    static func check(_ status: natsStatus, _ code: jsErrCode) throws(NATSError) {
        guard status == NATS_OK else { throw error(status, code) }
    }

    /// The error for a failed libnats call; read on the thread that made the call, right after it
    /// (libnats keeps the detailed text per thread).
    static func error(_ status: natsStatus) -> NATSError {
        switch status {
        case NATS_TIMEOUT: return .timeout
        case NATS_NO_RESPONDERS: return .noResponders
        case NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_NOT_YET_CONNECTED: return .notConnected
        case NATS_INVALID_ARG, NATS_INVALID_SUBJECT, NATS_INVALID_QUEUE_NAME, NATS_INVALID_TIMEOUT:
            return .invalid(text(status))
        default: return .status(code: Int32(bitPattern: status.rawValue), text: text(status))
        }
    }

    /// The error for a failed JetStream call: the API's error code when the server answered with one
    /// (10071 as ``NATSError/wrongLastSequence``), otherwise as ``error(_:)``.
    static func error(_ status: natsStatus, _ code: jsErrCode) -> NATSError {
        let number = Int(code.rawValue)
        switch status {
        case NATS_TIMEOUT, NATS_NO_RESPONDERS, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_NOT_YET_CONNECTED:
            // libnats reports "no responders" to a JetStream API request as JSNotEnabledErr too.
            return error(status)
        default:
            guard number != 0 else { return error(status) }
            if number == wrongLastSequence { return .wrongLastSequence }
            return .jetStream(errorCode: number, text: lastErrorText(for: status) ?? "JetStream error")
        }
    }

    /// `natsStatus_GetText(status)`, followed by the calling thread's last error text when that is
    /// for the same status and says more.
    static func text(_ status: natsStatus) -> String {
        let base = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
        guard let detail = lastErrorText(for: status), detail != base else { return base }
        return "\(base): \(detail)"
    }

    /// `nats_GetLastError` when it is about `status` (not an older error of this thread), without
    /// the "(file.c:line): " libnats puts in front of the words.
    static func lastErrorText(for status: natsStatus) -> String? {
        var last = NATS_OK
        guard let text = nats_GetLastError(&last), last == status else { return nil }
        var string = Substring(String(cString: text))
        if string.hasPrefix("("), let end = string.range(of: "): "),
            string[string.index(after: string.startIndex)..<end.lowerBound].contains(":")
        {
            string = string[end.upperBound...]
        }
        return string.isEmpty ? nil : String(string)
    }

    /// `duration` in whole milliseconds, libnats' unit for timeouts; a positive duration under 1 ms
    /// becomes 1 ms (0 means "no timeout" or is refused in several libnats calls).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return seconds > 0 ? .max : .min }
        let total = milliseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !total.overflow else { return seconds > 0 ? .max : .min }
        return total.partialValue == 0 && duration > .zero ? 1 : total.partialValue
    }

    /// `duration` in nanoseconds, JetStream's unit for ages and windows (Go's time.Duration).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return seconds > 0 ? .max : .min }
        let total = nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !total.overflow else { return seconds > 0 ? .max : .min }
        return total.partialValue
    }

    /// A positive timeout in milliseconds, or ``NATSError/invalid(_:)``.
    static func timeout(_ duration: Duration, _ what: String) throws(NATSError) -> Int64 {
        guard duration > .zero else { throw .invalid("\(what) must be positive, not \(duration)") }
        return milliseconds(duration)
    }
}
