import SocketLog

/// A log handler for tests: hands each line's level and text (``StreamLogHandler/text(of:metadata:)``:
/// the message and its `key=value` metadata, no time) to `record`. Level ``Logger/Level/trace`` by
/// default, so every line is seen.
public struct RecordingLogHandler: LogHandler {
    private let record: @Sendable (Logger.Level, String) -> Void
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(record: @escaping @Sendable (Logger.Level, String) -> Void) { self.record = record }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        record(level, StreamLogHandler.text(of: message, metadata: self.metadata.merging(metadata ?? [:]) { $1 }))
    }
}

extension Logger {
    /// A logger whose lines' texts (no level, no time) go to `recorder`, at levels from `level` up.
    public static func recording(into recorder: EventRecorder<String>, label: String = "test", level: Logger.Level = .trace) -> Logger {
        var handler = RecordingLogHandler { _, text in recorder.record(text) }
        handler.logLevel = level
        return Logger(label: label, handler: handler)
    }
}

/// The text of a ``StreamLogHandler`` line (what follows `TIME LEVEL `), or the line itself when it does
/// not start with a time and a level: for tests reading `im-server`'s standard output.
public func logText(_ line: String) -> String {
    let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].hasSuffix("Z"), parts[0].contains("T"), Logger.Level(rawValue: String(parts[1])) != nil else {
        return line
    }
    return String(parts[2])
}
