import Synchronization

/// Chooses the handler of every ``Logger`` made with ``Logger/init(label:)``: swift-log's
/// `LoggingSystem`. Until ``bootstrap(_:)`` is called, loggers are silent (``NoOpLogHandler``): the
/// library logs only where an app asked for it.
public enum LoggingSystem {
    private static let factory = Mutex<@Sendable (String) -> any LogHandler>({ _ in NoOpLogHandler() })

    /// Makes `factory` the maker of handlers for loggers created from now on (existing loggers keep
    /// theirs). An app calls it once, at start, before it makes its parts; `factory` gets each
    /// logger's label and may be called from any thread.
    public static func bootstrap(_ factory: @escaping @Sendable (String) -> any LogHandler) {
        self.factory.withLock { $0 = factory }
    }

    static func makeHandler(_ label: String) -> any LogHandler {
        factory.withLock { $0 }(label)
    }
}
