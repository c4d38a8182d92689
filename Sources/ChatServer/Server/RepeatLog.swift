/// Log lines for events that may repeat without end from one source (refused connections from one
/// address, rate-limited messages of one user, bad frames from one host): the first event of a kind
/// from a source is logged at once; the ones after it are only counted, and summed up in one line once
/// ``interval`` has passed since that first one (``summaries(now:)``) or when the source goes away
/// (``close(source:now:)``). So one source costs at most two lines per interval, however fast it
/// offends. At most ``maxSources`` sources are followed at once; events of others are counted together.
///
/// A pure value (internal for tests): times are given, in nanoseconds of any monotonic clock.
struct RepeatLog: Sendable {
    /// A source (an address, a session) and the kind of event, which are counted apart.
    struct Key: Hashable, Sendable {
        let source: String
        let kind: String
    }

    private struct Window: Sendable {
        let line: String
        let since: UInt64
        var repeats = 0
    }

    /// How long after a source's first event its repeats are summed up. Default 60 s.
    let interval: UInt64
    /// The most sources followed at once. Default 1,000.
    let maxSources: Int
    private var windows: [Key: Window] = [:]
    /// Events of sources beyond ``maxSources``, and since when.
    private var others: (count: Int, since: UInt64)?

    init(interval: Duration = .seconds(60), maxSources: Int = 1_000) {
        let (seconds, attoseconds) = interval.components
        self.interval = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.maxSources = maxSources
    }

    /// True when nothing is being counted (no summary will come).
    var isEmpty: Bool { windows.isEmpty && others == nil }

    /// Notes one event, `line`, of `key`: returns the line to log now (the first of its window), or nil
    /// when it is a repeat, counted for the summary.
    mutating func note(_ line: String, key: Key, now: UInt64) -> String? {
        if windows[key] != nil {
            windows[key]?.repeats += 1
            return nil
        }
        guard windows.count < maxSources else {
            others = ((others?.count ?? 0) + 1, others?.since ?? now)
            return nil
        }
        windows[key] = Window(line: line, since: now)
        return line
    }

    /// The summaries of the windows whose interval has passed by `now` (of every window when `all`: the
    /// process is ending), oldest first (windows without repeats end without a line); the next event of
    /// such a key is logged again.
    mutating func summaries(now: UInt64, all: Bool = false) -> [String] {
        let ended = windows.filter { all || now &- $0.value.since >= interval }.sorted { $0.value.since < $1.value.since }
        var lines: [String] = []
        for (key, window) in ended {
            windows[key] = nil
            if window.repeats > 0 { lines.append(RepeatLog.summary(window, now: now)) }
        }
        if let others, all || now &- others.since >= interval {
            lines.append("\(others.count) more events from other sources in \(RepeatLog.seconds(now &- others.since)) s")
            self.others = nil
        }
        return lines
    }

    /// Ends the windows of `source` (it went away): their summaries, if they counted repeats.
    mutating func close(source: String, now: UInt64) -> [String] {
        let ended = windows.filter { $0.key.source == source }.sorted { $0.value.since < $1.value.since }
        var lines: [String] = []
        for (key, window) in ended {
            windows[key] = nil
            if window.repeats > 0 { lines.append(RepeatLog.summary(window, now: now)) }
        }
        return lines
    }

    private static func summary(_ window: Window, now: UInt64) -> String {
        "\(window.line) (and \(window.repeats) more like it in \(seconds(now &- window.since)) s)"
    }

    /// Whole seconds, rounded down, at least 0.
    private static func seconds(_ nanoseconds: UInt64) -> UInt64 { nanoseconds / 1_000_000_000 }
}
