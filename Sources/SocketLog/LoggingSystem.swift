import Foundation

/// Chooses the handler of every ``Logger`` made with ``Logger/init(label:)``: swift-log's
/// `LoggingSystem`. Until ``bootstrap(_:)`` is called, loggers are silent (``NoOpLogHandler``): the
/// library logs only where an app asked for it.
public enum LoggingSystem {
    /// The factory, read and written under ``lock`` only.
    nonisolated(unsafe) private static var factory: @Sendable (String) -> any LogHandler = { _ in NoOpLogHandler() }
    /// A pthread mutex (`NSLock`), which ThreadSanitizer sees; a Synchronization `Mutex` locks with futex
    /// calls it does not see, and it reported two loggers made at once as a data race here.
    private static let lock = NSLock()

    /// Makes `factory` the maker of handlers for loggers created from now on (existing loggers keep
    /// theirs). An app calls it once, at start, before it makes its parts; `factory` gets each
    /// logger's label and may be called from any thread.
    public static func bootstrap(_ factory: @escaping @Sendable (String) -> any LogHandler) {
        lock.withLock { self.factory = factory }
    }

    static func makeHandler(_ label: String) -> any LogHandler {
        lock.withLock { factory }(label)
    }
}
