/// What code logs through: a label naming the part that logs, and a ``LogHandler`` that decides whether
/// and where each line goes. A value type: copies share nothing but the handler's own storage, and a
/// copy's ``logLevel`` or metadata may be changed without touching the original.
///
/// The same calls as swift-log's `Logger` (`trace` … `critical`, `log(level:_:metadata:)`, metadata
/// subscripts). Messages and metadata are autoclosures: below the handler's ``logLevel`` they are never
/// built, so a disabled `debug` line costs one comparison.
///
/// ```swift
/// var logger = Logger(label: "IMChat.ChatServer")
/// logger[metadataKey: "node"] = "a"
/// logger.notice("refused login", metadata: ["user": "\(name)", "reason": "wrong password"])
/// ```
public struct Logger: Sendable {
    /// Where lines go, and the level and metadata applied to them.
    public var handler: any LogHandler
    /// The part that logs, in reverse-DNS or module style (`IMChat.ChatServer`).
    public let label: String

    /// A logger whose handler is the one ``LoggingSystem`` makes for `label` (silent until an app calls
    /// ``LoggingSystem/bootstrap(_:)``).
    public init(label: String) {
        self.init(label: label, handler: LoggingSystem.makeHandler(label))
    }

    /// A logger with its own handler, whatever ``LoggingSystem`` was bootstrapped with.
    public init(label: String, handler: any LogHandler) {
        self.label = label
        self.handler = handler
    }

    /// The least severe level that is logged; below it calls do nothing. The handler's.
    public var logLevel: Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    /// Metadata added to every line of this logger (the handler's).
    public subscript(metadataKey key: String) -> Metadata.Value? {
        get { handler[metadataKey: key] }
        set { handler[metadataKey: key] = newValue }
    }

    /// Logs `message` at `level` when `level` is at least ``logLevel``, with `metadata` merged over the
    /// logger's own (the call's values win).
    @inlinable
    public func log(
        level: Level, _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard level >= handler.logLevel else { return }
        handler.log(
            level: level, message: message(), metadata: metadata(), source: source() ?? Logger.module(of: file),
            file: file, function: function, line: line)
    }

    /// The module part of a `#fileID` (`ChatServer/Router.swift` → `ChatServer`), swift-log's default source.
    @usableFromInline
    static func module(of fileID: String) -> String {
        fileID.split(separator: "/", maxSplits: 1).first.map(String.init) ?? "n/a"
    }
}

extension Logger {
    /// How severe a line is, from the least (`trace`) to the most (`critical`): swift-log's seven levels,
    /// which are syslog's (RFC 5424 §6.2.1) without `alert` and `emergency`, plus `trace` below `debug`.
    public enum Level: String, Sendable, CaseIterable, Codable, Comparable {
        /// Step by step detail, for following one connection through the code.
        case trace
        /// Detail for developers: every session opened and closed, for example.
        case debug
        /// What an operator wants in the log: logins, logouts, start and stop.
        case info
        /// Worth attention but expected: a refused login, a client over a limit.
        case notice
        /// Something went wrong and was handled: a peer's protocol error, a message that could not be sent.
        case warning
        /// Something failed that should not have: the message store, for example.
        case error
        /// The process cannot go on as it should.
        case critical

        /// Orders by severity, `trace` < `debug` < … < `critical`.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.severity < rhs.severity }

        private var severity: Int { Level.allCases.firstIndex(of: self) ?? 0 }
    }

    /// Key-value context of a line (`user`, `peer`, `reason`).
    public typealias Metadata = [String: MetadataValue]

    /// One metadata value: a string, something printed with `description`, or nested metadata.
    public enum MetadataValue: Sendable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
    {
        /// Text.
        case string(String)
        /// A value printed with its `description` only when the line is written.
        case stringConvertible(any CustomStringConvertible & Sendable)
        /// Nested metadata.
        case dictionary(Metadata)
        /// A list of values.
        case array([MetadataValue])

        /// The value as a log line shows it: the text; `[a, b]` for arrays; `[k: v]` for dictionaries
        /// (keys sorted).
        public var description: String {
            switch self {
            case .string(let text): return text
            case .stringConvertible(let value): return value.description
            case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
            case .dictionary(let values):
                return "[" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
            }
        }

        public init(stringLiteral value: String) { self = .string(value) }
        public init(arrayLiteral elements: MetadataValue...) { self = .array(elements) }
        public init(dictionaryLiteral elements: (String, MetadataValue)...) {
            self = .dictionary(Metadata(elements, uniquingKeysWith: { $1 }))
        }
    }

    /// The text of a line, written with a string literal or interpolation.
    public struct Message: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation
    {
        /// The text.
        public var description: String

        public init(stringLiteral value: String) { description = value }
        public init(stringInterpolation: DefaultStringInterpolation) { description = String(stringInterpolation: stringInterpolation) }
    }
}

extension Logger {
    /// Logs at ``Level/trace``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func trace(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .trace, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/debug``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func debug(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .debug, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/info``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func info(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .info, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/notice``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func notice(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .notice, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/warning``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func warning(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .warning, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/error``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func error(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .error, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }

    /// Logs at ``Level/critical``. See ``log(level:_:metadata:source:file:function:line:)``.
    @inlinable
    public func critical(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        source: @autoclosure () -> String? = nil, file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .critical, message(), metadata: metadata(), source: source(), file: file, function: function, line: line)
    }
}
