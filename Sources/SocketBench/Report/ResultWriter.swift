import Foundation

/// Writes a ``BenchResult`` out: the RESULT line, the human summary, a CSV row. Pure functions of the
/// result (plus the CSV file), callable from any thread.
enum ResultWriter {
    /// `RESULT key=value …` on one line, spaces in values replaced by `_` so the line splits on spaces.
    static func resultLine(_ result: BenchResult) -> String {
        "RESULT " + result.fields.map { "\($0.key)=\($0.value.replacingOccurrences(of: " ", with: "_"))" }.joined(separator: " ")
    }

    /// A few lines for people: settings, throughput, latency, errors.
    static func summary(_ result: BenchResult) -> String {
        let options = result.options
        var lines = [
            "\(options.label.isEmpty ? "" : options.label + " ")\(options.mode.rawValue): \(options.connections) conns, "
                + "S=\(options.size) B, D=\(options.depth), \(options.loops) loop(s), "
                + String(format: "%.2f s measured (+%.1f s warmup)", result.seconds, options.warmup),
            String(
                format: "  %12.0f msgs/s   %10.2f MB/s echoed   %llu msgs", result.messagesPerSecond,
                result.megabytesPerSecond, result.messages),
            String(
                format: "  latency µs: p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f", result.latencyMicroseconds(0.5),
                result.latencyMicroseconds(0.99), result.latencyMicroseconds(0.999), Double(result.latency.max) / 1e3),
            "  connected \(result.connected)/\(options.connections) (failed \(result.connectFailures)), alive \(result.alive), "
                + "errors \(result.errors), mismatches \(result.mismatches)"
        ]
        if options.mode == .idle {
            lines.append("  heartbeats sent \(result.heartbeatsSent), echoed \(result.heartbeatsEchoed), missed \(result.heartbeatsMissed)")
        }
        if let rss = result.serverRSSKilobytes { lines.append("  server RSS \(rss) KiB at the end") }
        if let cpu = result.serverCPUSeconds, options.mode != .idle {
            lines.append(
                String(
                    format: "  server CPU %.2f s in the measured window: %.3f µs per message", cpu,
                    result.serverCPUMicrosecondsPerMessage ?? 0))
        }
        if let perConnection = result.serverRSSBytesPerConnection {
            lines.append(String(format: "  server RSS per connection %.0f B (end minus before the first connect)", perConnection))
        }
        if options.webSocket?.deflate == true { lines.append("  permessage-deflate accepted on \(result.deflateAccepted) connections") }
        if let compression = result.compression {
            lines.append(
                String(
                    format: "  payload bytes per message byte: sent %.3f, echoed %.3f (%d message bytes sent)", compression.sentRatio,
                    compression.echoRatio, compression.plainSent))
        }
        return lines.joined(separator: "\n")
    }

    /// The CSV header line and the row of `result` (fields quoted when they hold a comma or a quote).
    static func csv(_ result: BenchResult) -> (header: String, row: String) {
        let fields = result.fields
        return (fields.map(\.key).joined(separator: ","), fields.map { quoted($0.value) }.joined(separator: ","))
    }

    /// Appends `result`'s row to the file at `path`, after the header when the file is new or empty.
    /// - Throws: the file system's error when it cannot be created or written.
    static func appendCSV(_ result: BenchResult, to path: String) throws {
        let (header, row) = csv(result)
        let manager = FileManager.default
        let isNew = ((try? manager.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0
        if !manager.fileExists(atPath: path) { _ = manager.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(((isNew ? header + "\n" : "") + row + "\n").utf8))
    }

    /// Whether a CSV row could be appended to `path`: the file is writable, or it does not exist and its
    /// folder is writable. Checked before a run, so a bad path does not waste one.
    static func canAppend(to path: String) -> Bool {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) { return manager.isWritableFile(atPath: path) }
        let folder = (path as NSString).deletingLastPathComponent
        return manager.isWritableFile(atPath: folder.isEmpty ? "." : folder)
    }

    private static func quoted(_ value: String) -> String {
        guard value.contains(",") || value.contains("\"") || value.contains("\n") else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
