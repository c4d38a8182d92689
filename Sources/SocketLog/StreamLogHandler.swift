import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes each line to a file descriptor (standard output or error) as one `write(2)`, so lines from
/// several threads never interleave:
///
/// ```
/// 2026-12-01T20:15:03.123Z info login ann from 127.0.0.1:51340
/// 2026-12-01T20:15:09.870Z notice refused login bob from 127.0.0.1 reason="wrong password"
/// ```
///
/// The time is UTC in ISO 8601 with milliseconds (RFC 3339 §5.6), then the level, the message, and the
/// metadata as `key=value` pairs sorted by key (the handler's merged under the call's; a value with a
/// space, `"` or `=` in double quotes, `"` and `\` escaped with `\`). Line breaks in
/// a message or value are written as `\n` so that one event is one line, and other control
/// characters and bidirectional overrides as `\u{1B}`, so that text from the network cannot forge a
/// line or drive the operator's terminal. Default level
/// ``Logger/Level/info``.
public struct StreamLogHandler: LogHandler {
    private let descriptor: Int32
    private let clock: @Sendable () -> (seconds: Int, milliseconds: Int)
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    /// A handler writing to standard output (descriptor 1).
    public static func standardOutput(label: String) -> StreamLogHandler { StreamLogHandler(descriptor: 1) }

    /// A handler writing to standard error (descriptor 2).
    public static func standardError(label: String) -> StreamLogHandler { StreamLogHandler(descriptor: 2) }

    /// A handler writing to `descriptor`, stamping lines with `clock` (whole seconds since 1970 UTC and
    /// milliseconds within the second; default: `clock_gettime(CLOCK_REALTIME)`; tests pass a fixed one).
    public init(descriptor: Int32, clock: @escaping @Sendable () -> (seconds: Int, milliseconds: Int) = StreamLogHandler.now) {
        self.descriptor = descriptor
        self.clock = clock
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        let time = clock()
        var text = StreamLogHandler.line(
            level: level, message: message, metadata: self.metadata.merging(metadata ?? [:]) { $1 },
            seconds: time.seconds, milliseconds: time.milliseconds)
        text.append("\n")
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, base + offset, bytes.count - offset)
                if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    /// The line (without its line feed) for these parts: what ``log(level:message:metadata:source:file:function:line:)``
    /// writes.
    public static func line(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata,
        seconds: Int, milliseconds: Int
    ) -> String {
        timestamp(seconds: seconds, milliseconds: milliseconds) + " " + level.rawValue + " " + text(of: message, metadata: metadata)
    }

    /// The part of a line after its level: the message, then the metadata's `key=value` pairs.
    public static func text(of message: Logger.Message, metadata: Logger.Metadata) -> String {
        var text = oneLine(message.description)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            text += " " + key + "=" + quotedIfNeeded(oneLine(value.description))
        }
        return text
    }

    /// `seconds` since 1970-01-01 UTC and `milliseconds` as `2026-12-01T20:15:03.123Z`.
    public static func timestamp(seconds: Int, milliseconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millis)Z"
    }

    /// The wall clock: whole seconds since 1970 UTC and the milliseconds within the second.
    @Sendable public static func now() -> (seconds: Int, milliseconds: Int) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return (Int(spec.tv_sec), Int(spec.tv_nsec / 1_000_000))
    }

    /// `text`, or `"text"` (with `"` and `\` escaped by `\`) when it is empty or holds a space, `"`
    /// or `=`, so `key=value` pairs can be split again.
    private static func quotedIfNeeded(_ text: String) -> String {
        guard text.isEmpty || text.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else { return text }
        var quoted = "\""
        for character in text {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// `text` on one line that cannot drive the terminal showing it: line breaks as `\n` and `\r`,
    /// every other control character (C0, DEL, C1) and the bidirectional overrides and isolates
    /// (U+202A–U+202E, U+2066–U+2069, which reorder what follows: "Trojan Source", CVE-2021-42574) as
    /// `\u{1B}`. Text from the network (a user name, a request) reaches log lines.
    private static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped.append(contentsOf: "\\n".unicodeScalars)
            case "\r": escaped.append(contentsOf: "\\r".unicodeScalars)
            case _ where needsEscape(scalar):
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
