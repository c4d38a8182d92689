import CNATS

extension JetStream {
    /// A stream's settings, the part of libnats' `jsStreamConfig` this API sets; the rest keeps
    /// `jsStreamConfig_Init`'s defaults (limits retention, discard old, no limits on bytes).
    public struct StreamConfiguration: Sendable, Equatable {
        /// Where a stream keeps its messages (`jsStorageType`).
        public enum Storage: Sendable, Equatable {
            /// On disk, under the server's `-sd` directory (`js_FileStorage`).
            case file
            /// In the server's memory, lost when it stops (`js_MemoryStorage`).
            case memory
        }

        /// The stream's name: letters, digits, `-` and `_` (no `.`, `*`, `>` or white space).
        public var name: String
        /// The subjects it stores (wildcards allowed); none overlapping another stream's.
        public var subjects: [String]
        /// How many servers keep a copy (1 on a single server; up to 5 in a cluster).
        public var replicas: Int
        /// Disk (the default) or memory.
        public var storage: Storage
        /// How long a message is kept (`MaxAge`, nanoseconds on the wire); nil for ever.
        public var maxAge: Duration?
        /// At most this many messages, the oldest discarded first (`MaxMsgs`); nil for no limit.
        public var maxMessages: Int64?
        /// At most this many messages per subject, the oldest discarded first
        /// (`MaxMsgsPerSubject`); nil for no limit.
        public var maxMessagesPerSubject: Int64?
        /// How long a publish's message ID is remembered to drop duplicates (`Duplicates`); nil
        /// for the server's default, 2 minutes.
        public var duplicateWindow: Duration?

        /// A configuration; the defaults are one replica, file storage and no limits.
        public init(
            name: String, subjects: [String], replicas: Int = 1, storage: Storage = .file,
            maxAge: Duration? = nil, maxMessages: Int64? = nil, maxMessagesPerSubject: Int64? = nil,
            duplicateWindow: Duration? = nil
        ) {
            self.name = name
            self.subjects = subjects
            self.replicas = replicas
            self.storage = storage
            self.maxAge = maxAge
            self.maxMessages = maxMessages
            self.maxMessagesPerSubject = maxMessagesPerSubject
            self.duplicateWindow = duplicateWindow
        }
    }

    /// Creates the stream (`js_AddStream`), or, when one of that name exists with other settings
    /// (JetStream error 10058), updates it to these (`js_UpdateStream`). Creating one that exists
    /// with the same settings succeeds. Blocks up to ``timeout`` (twice for an update).
    /// - Throws: ``NATSError/invalid(_:)`` for an empty name or subject list or a bad limit;
    ///   ``NATSError/jetStream(errorCode:text:)`` when the server refuses (e.g. 10065, subjects
    ///   overlapping another stream's; 10052, a change the server cannot make);
    ///   ``NATSError/timeout``; ``NATSError/noResponders`` when JetStream is not enabled.
    public func addOrUpdateStream(_ configuration: StreamConfiguration) throws(NATSError) {
        guard !configuration.name.isEmpty else { throw .invalid("the stream name is empty") }
        guard !configuration.subjects.isEmpty, !configuration.subjects.contains("") else {
            throw .invalid("stream \(configuration.name) needs non-empty subjects")
        }
        guard configuration.replicas >= 1 else { throw .invalid("replicas must be at least 1") }
        if let maxAge = configuration.maxAge, maxAge <= .zero { throw .invalid("maxAge must be positive") }
        if let window = configuration.duplicateWindow, window <= .zero { throw .invalid("duplicateWindow must be positive") }
        if let limit = configuration.maxMessages, limit <= 0 { throw .invalid("maxMessages must be positive") }
        if let limit = configuration.maxMessagesPerSubject, limit <= 0 { throw .invalid("maxMessagesPerSubject must be positive") }

        let (status, code) = withCStringArray(configuration.subjects) { subjects, count in
            configuration.name.withCString { name in
                var config = jsStreamConfig()
                jsStreamConfig_Init(&config)
                config.Name = name
                config.Subjects = subjects
                config.SubjectsLen = count
                config.Replicas = Int64(configuration.replicas)
                config.Storage = configuration.storage == .file ? js_FileStorage : js_MemoryStorage
                config.MaxAge = configuration.maxAge.map(LibNATS.nanoseconds) ?? 0
                config.MaxMsgs = configuration.maxMessages ?? -1
                config.MaxMsgsPerSubject = configuration.maxMessagesPerSubject ?? -1
                config.Duplicates = configuration.duplicateWindow.map(LibNATS.nanoseconds) ?? 0
                var code = jsErrCode(rawValue: 0)
                var info: UnsafeMutablePointer<jsStreamInfo>?
                var status = js_AddStream(&info, pointer, &config, nil, &code)
                jsStreamInfo_Destroy(info)
                if status != NATS_OK && Int(code.rawValue) == LibNATS.streamNameExists {
                    info = nil
                    status = js_UpdateStream(&info, pointer, &config, nil, &code)
                    jsStreamInfo_Destroy(info)
                }
                return (status, code)
            }
        }
        try LibNATS.check(status, code)
    }
}
