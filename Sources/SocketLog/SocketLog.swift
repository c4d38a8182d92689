// SocketLog: the library's logging, shaped like swift-log (https://github.com/apple/swift-log), which
// cannot be fetched here. `Logger` is what code logs through; a `LogHandler` decides where lines go;
// `LoggingSystem.bootstrap` chooses the handler for every `Logger` made afterwards. Until an app
// bootstraps it, every logger is silent (`NoOpLogHandler`), so the library writes nothing of its own.
// An app that later moves to swift-log replaces `import SocketLog` with `import Logging`: the calls
// (`logger.info("…", metadata: ["user": "\(name)"])`) are the same.
