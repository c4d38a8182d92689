import AsyncSocket
import Foundation

/// Where a ``SmartHeartbeat`` keeps what it learned, by network identifier, so that a restart does
/// not probe from scratch. Called on the link's event loop after each heartbeat's outcome (at most one
/// call per heartbeat, minutes apart): a small synchronous write is fine.
public protocol HeartbeatIntervalStore: Sendable {
    /// What was learned about network `network`, or `nil` when nothing was.
    /// - Throws: when the store cannot be read; the link then starts that network afresh (and logs it).
    func learned(forNetwork network: String) throws -> LearnedHeartbeat?
    /// Keeps `learned` for network `network`, replacing what was there.
    /// - Throws: when the store cannot be written; the link goes on with what it learned in memory.
    func save(_ learned: LearnedHeartbeat, forNetwork network: String) throws
}

/// A ``HeartbeatIntervalStore`` in memory (nothing survives the process). Thread-safe.
public final class InMemoryHeartbeatIntervalStore: HeartbeatIntervalStore {
    private let entries = LockedValue<[String: LearnedHeartbeat]>([:])

    /// An empty store, or one knowing `entries` (network identifier → learned).
    public init(_ entries: [String: LearnedHeartbeat] = [:]) {
        self.entries.withLock { $0 = entries }
    }

    public func learned(forNetwork network: String) -> LearnedHeartbeat? { entries.withLock { $0[network] } }

    public func save(_ learned: LearnedHeartbeat, forNetwork network: String) {
        entries.withLock { $0[network] = learned }
    }

    /// Everything kept, by network identifier.
    public var all: [String: LearnedHeartbeat] { entries.withLock { $0 } }
}

/// A ``HeartbeatIntervalStore`` in one JSON file (`{"network id": {"intervalMilliseconds": 250000,
/// "isSettled": true, …}}`), rewritten atomically (a temporary file renamed over it) on each save,
/// keeping the ``limit`` most recently changed networks (Mars keeps 20). A missing file is an empty
/// store; its directory is created on the first save. Thread-safe within one process; two processes
/// sharing a file each keep their last write.
public final class FileHeartbeatIntervalStore: HeartbeatIntervalStore {
    /// The file.
    public let url: URL
    /// The most networks kept; beyond it the least recently changed one is forgotten. Default 20.
    public let limit: Int
    private let lock = LockedValue(())

    /// `$XDG_STATE_HOME/swift-async-socket/heartbeat-intervals.json`, or
    /// `~/.local/state/swift-async-socket/heartbeat-intervals.json` without `XDG_STATE_HOME` (the XDG
    /// Base Directory Specification's place for state that should survive restarts).
    public static var defaultLocation: URL {
        let base =
            ProcessInfo.processInfo.environment["XDG_STATE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return base.appendingPathComponent("swift-async-socket/heartbeat-intervals.json")
    }

    /// A store in the file at `url` keeping at most `limit` networks.
    public init(url: URL, limit: Int = 20) {
        self.url = url
        self.limit = max(limit, 1)
    }

    /// - Throws: the file's read error (other than its not existing) or `DecodingError` for a file
    ///   that is not such JSON.
    public func learned(forNetwork network: String) throws -> LearnedHeartbeat? {
        try lock.withLock { _ in try read()[network] }
    }

    /// - Throws: the read error of ``learned(forNetwork:)``, or the error creating the directory or
    ///   writing the file.
    public func save(_ learned: LearnedHeartbeat, forNetwork network: String) throws {
        try lock.withLock { _ in
            var entries = (try? read()) ?? [:]
            entries[network] = learned
            while entries.count > limit, let oldest = entries.min(by: { $0.value.modified < $1.value.modified })?.key {
                entries[oldest] = nil
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            encoder.dateEncodingStrategy = .iso8601
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(entries).write(to: url, options: .atomic)
        }
    }

    private func read() throws -> [String: LearnedHeartbeat] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode([String: LearnedHeartbeat].self, from: data)
    }
}
