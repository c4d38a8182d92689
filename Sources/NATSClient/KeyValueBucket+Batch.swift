import Foundation

extension KeyValueBucket {
    /// The request that reads `key`'s current value, for a ``RequestBatcher`` batch: a JetStream
    /// direct get (`$JS.API.DIRECT.GET.KV_<bucket>.$KV.<bucket>.<key>`, empty payload), the request
    /// `kvStore_Get` makes (libnats 3.4) for a bucket that allows direct gets, as libnats makes them
    /// (`AllowDirect`). Its answer goes to ``entry(of:from:)``. A bucket that does not allow them
    /// (made by an older client) has no responder: the batch throws ``NATSError/noResponders``.
    /// - Throws: ``NATSError/invalid(_:)`` for a key KV does not allow.
    public func getRequest(for key: String) throws(NATSError) -> (subject: String, data: Data) {
        try KeyValueBucket.validate(key)
        return (subject: "\(jetStream.apiPrefix).DIRECT.GET.\(streamName).$KV.\(name).\(key)", data: Data())
    }

    /// The request that sets `key` to `value` whatever it was (as ``put(_:_:)``: a JetStream publish
    /// to the key's subject), for a ``RequestBatcher`` batch. Its answer goes to
    /// ``JetStream/publishAck(from:)``, whose sequence is the new revision.
    /// - Throws: ``NATSError/invalid(_:)`` for a key KV does not allow.
    public func putRequest(for key: String, _ value: Data) throws(NATSError) -> (subject: String, data: Data) {
        try KeyValueBucket.validate(key)
        return (subject: writeSubject(key), data: value)
    }

    /// `key`'s entry from the answer to its ``getRequest(for:)``, as ``get(_:)`` gives it: nil for
    /// "not found" (status 404) or a delete or purge marker (`KV-Operation`), where `kvStore_Get`
    /// says `NATS_NOT_FOUND`.
    /// - Throws: ``NATSError/status(code:text:)`` for an answer with another status or no sequence.
    public static func entry(of key: String, from answer: NATSMessage) throws(NATSError) -> Entry? {
        if let status = answer.headers[RequestBatcher.statusHeader], answer.data.isEmpty {
            if status == "404" { return nil }
            throw .status(code: -1, text: "direct get of \(key): status \(status) \(answer.headers["Description"] ?? "")")
        }
        if let operation = answer.headers[operationHeader], operation == "DEL" || operation == "PURGE" { return nil }
        guard let sequence = answer.headers["Nats-Sequence"].flatMap(UInt64.init) else {
            throw .status(code: -1, text: "direct get of \(key): no Nats-Sequence in the answer")
        }
        let created = answer.headers["Nats-Time-Stamp"].flatMap(RFC3339.date) ?? Date(timeIntervalSince1970: 0)
        return Entry(key: key, value: answer.data, revision: sequence, created: created)
    }
}

/// The server's RFC 3339 times in UTC (`2026-12-07T00:15:02.123456789Z`, up to nanoseconds), as
/// JetStream writes them in `Nats-Time-Stamp`.
enum RFC3339 {
    /// The time `text` gives, or nil when it is not one of that form.
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes.last == UInt8(ascii: "Z"), let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var nanoseconds = 0
        if bytes[19] == UInt8(ascii: "."), (22...30).contains(bytes.count), let digits = number(20..<bytes.count - 1) {
            nanoseconds = digits * Int(pow(10, Double(30 - bytes.count)))
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        // As libnats' entries give it (nanoseconds since 1970, then seconds), so equal times compare equal.
        return Date(timeIntervalSince1970: Double(Int64(timegm(&parts)) * 1_000_000_000 + Int64(nanoseconds)) / 1_000_000_000)
    }
}
