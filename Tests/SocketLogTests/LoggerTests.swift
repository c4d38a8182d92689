import Glibc
import SocketLog
import Synchronization
import Testing
import TestSupport

@Suite struct LoggerTests {
    @Test func levelsAreOrderedBySeverity() {
        #expect(Logger.Level.allCases.map(\.rawValue) == ["trace", "debug", "info", "notice", "warning", "error", "critical"])
        #expect(Logger.Level.trace < .debug && Logger.Level.warning < .error && Logger.Level.error < .critical)
        #expect(!(Logger.Level.info < .info))
    }

    @Test func linesBelowTheLevelAreNeitherWrittenNorBuilt() {
        let lines = Mutex<[String]>([])
        var handler = RecordingLogHandler { level, text in lines.withLock { $0.append("\(level) \(text)") } }
        handler.logLevel = .notice
        let logger = Logger(label: "test", handler: handler)
        let built = Atomic(0)
        func message(_ text: String) -> Logger.Message {
            built.add(1, ordering: .relaxed)
            return "\(text)"
        }
        logger.info(message("not written"))
        logger.debug(message("nor this"))
        logger.notice(message("written"))
        logger.error(message("this too"), metadata: ["user": "ann"])
        #expect(lines.withLock { $0 } == ["notice written", "error this too user=ann"])
        #expect(built.load(ordering: .relaxed) == 2)
    }

    @Test func aLoggerIsSilentUntilTheSystemIsBootstrapped() {
        // The default factory: a no-op handler whose level is critical and cannot be changed.
        var logger = Logger(label: "default")
        #expect(logger.handler is NoOpLogHandler)
        logger.logLevel = .trace
        #expect(logger.logLevel == .critical)
        logger[metadataKey: "key"] = "value"
        #expect(logger[metadataKey: "key"] == nil)
    }

    @Test func metadataOfTheCallWinsOverTheLoggers() {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "test", handler: RecordingLogHandler { _, text in lines.withLock { $0.append(text) } })
        logger[metadataKey: "node"] = "a"
        logger[metadataKey: "user"] = "ann"
        logger.info("login", metadata: ["user": "bob"])
        #expect(lines.withLock { $0 } == ["login node=a user=bob"])
    }

    @Test func aStreamLineHasTheUTCTimeTheLevelTheTextAndSortedMetadata() {
        // 1_700_000_000 s = 2023-11-14 22:13:20 UTC.
        let line = StreamLogHandler.line(
            level: .notice, message: "refused login bob", metadata: ["reason": "wrong password", "a": "1"],
            seconds: 1_700_000_000, milliseconds: 7)
        #expect(line == #"2023-11-14T22:13:20.007Z notice refused login bob a=1 reason="wrong password""#)
        #expect(StreamLogHandler.timestamp(seconds: 0, milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(StreamLogHandler.timestamp(seconds: 951_782_400 + 86_399, milliseconds: 999) == "2000-02-29T23:59:59.999Z")
    }

    @Test func oneEventIsOneLine() {
        let text = StreamLogHandler.text(of: "two\nlines\r", metadata: ["detail": "say \"hi\"\n", "empty": "", "eq": "a=b"])
        // The value's escaped line feed is `\n`, whose backslash the quotes escape again.
        #expect(text == #"two\nlines\r detail="say \"hi\"\\n" empty="" eq="a=b""#)
    }

    /// A name from the network with an escape sequence or a bidirectional override cannot drive the
    /// operator's terminal or reorder the line; other characters, invisible or not, are kept.
    @Test func controlCharactersAndBidiOverridesAreEscaped() {
        let text = StreamLogHandler.text(of: "refused login \u{1B}[2Jbob\u{7F}\u{85}", metadata: ["name": "\u{202E}nb\u{2066}a"])
        #expect(text == #"refused login \u{1B}[2Jbob\u{7F}\u{85} name=\u{202E}nb\u{2066}a"#)
        #expect(
            StreamLogHandler.text(of: "refused login \u{3164} (invalid name)", metadata: [:]) == "refused login \u{3164} (invalid name)")
    }

    @Test func aStreamHandlerWritesWholeLinesToItsDescriptor() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        var handler = StreamLogHandler(descriptor: descriptors[1]) { (1_700_000_000, 123) }
        handler[metadataKey: "node"] = "a"
        let logger = Logger(label: "test", handler: handler)
        logger.debug("below the default level")
        logger.info("login ann from 127.0.0.1:51340")
        logger.warning("drop 127.0.0.1:1 (protocol error)")
        close(descriptors[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptors[0], &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        #expect(
            String(decoding: bytes, as: UTF8.self) == """
                2023-11-14T22:13:20.123Z info login ann from 127.0.0.1:51340 node=a
                2023-11-14T22:13:20.123Z warning drop 127.0.0.1:1 (protocol error) node=a

                """)
    }

    @Test func logTextReadsTheTextBackOutOfAStreamLine() {
        #expect(logText("2023-11-14T22:13:20.123Z info login ann from 127.0.0.1:51340") == "login ann from 127.0.0.1:51340")
        #expect(logText("im-server listening on 127.0.0.1:7777") == "im-server listening on 127.0.0.1:7777")
    }
}
