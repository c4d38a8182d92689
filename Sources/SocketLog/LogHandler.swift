/// Where a ``Logger``'s lines go: swift-log's `LogHandler` contract. The logger has already checked
/// the level when ``log(level:message:metadata:source:file:function:line:)`` is called; a handler
/// merges the call's metadata over its own and writes the line.
///
/// Handlers are values held by each logger: setting ``logLevel`` or metadata on one logger's handler
/// changes that logger only. `log` may be called from any thread at once.
public protocol LogHandler: Sendable {
    /// Writes one line. `metadata` is the call's (to be merged over ``metadata``); `source` is the
    /// module that logged (or what the call named); `file`, `function` and `line` are the call site's.
    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt)
    /// One metadata value of this handler.
    subscript(metadataKey key: String) -> Logger.Metadata.Value? { get set }
    /// Metadata added to every line.
    var metadata: Logger.Metadata { get set }
    /// The least severe level written.
    var logLevel: Logger.Level { get set }
}

/// Writes nothing: the handler of every ``Logger`` until ``LoggingSystem/bootstrap(_:)`` chooses
/// another (swift-log's `SwiftLogNoOpLogHandler`). Its level is ``Logger/Level/critical``, so calls at
/// other levels stop at the level check, and setting a level or metadata on it changes nothing.
public struct NoOpLogHandler: LogHandler {
    /// A handler that writes nothing.
    public init() {}

    public func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    public var logLevel: Logger.Level {
        get { .critical }
        set {}
    }
}
