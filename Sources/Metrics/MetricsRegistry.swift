import Foundation

/// The metrics of one process, in the order they were registered, and their rendering in the
/// Prometheus text format 0.0.4 (``render()``).
///
/// Register at setup (names are checked with `precondition`: a bad name is a programming error);
/// update the returned metrics from any thread; render from any thread.
public final class MetricsRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [Entry] = []

    /// An empty registry.
    public init() {}

    /// What one registered name renders.
    private struct Entry {
        let name: String
        let help: String
        let type: String
        let samples: @Sendable () -> [String]
    }

    /// A counter without labels. `name` should end in `_total` (Prometheus's naming rule for counters).
    public func counter(_ name: String, help: String) -> Counter {
        counter(name, help: help, labelNames: []).labels([])
    }

    /// A family of counters with `labelNames`.
    public func counter(_ name: String, help: String, labelNames: [String]) -> MetricFamily<Counter> {
        family(name, help: help, type: "counter", labelNames: labelNames, make: { Counter() }) { "\($0.value)" }
    }

    /// A counter read at each scrape by calling `sample` (on the scraping thread): a count kept elsewhere.
    public func counter(_ name: String, help: String, sample: @escaping @Sendable () -> UInt64) {
        register(name, help: help, type: "counter", labelNames: []) { ["\(name) \(sample())"] }
    }

    /// A gauge without labels.
    public func gauge(_ name: String, help: String) -> Gauge {
        gauge(name, help: help, labelNames: []).labels([])
    }

    /// A family of gauges with `labelNames`.
    public func gauge(_ name: String, help: String, labelNames: [String]) -> MetricFamily<Gauge> {
        family(name, help: help, type: "gauge", labelNames: labelNames, make: { Gauge() }) { "\($0.value)" }
    }

    /// A gauge read at each scrape by calling `sample` (on the scraping thread): a queue's depth, say.
    public func gauge(_ name: String, help: String, sample: @escaping @Sendable () -> Double) {
        register(name, help: help, type: "gauge", labelNames: []) { ["\(name) \(PrometheusText.number(sample()))"] }
    }

    /// A histogram without labels, with `buckets` as upper bounds (ascending, finite; `+Inf` is added).
    public func histogram(_ name: String, help: String, buckets: [Double]) -> Histogram {
        histogram(name, help: help, labelNames: [], buckets: buckets).labels([])
    }

    /// A family of histograms with `labelNames` (not `le`, which the buckets use), each with `buckets`.
    public func histogram(_ name: String, help: String, labelNames: [String], buckets: [Double]) -> MetricFamily<Histogram> {
        precondition(!labelNames.contains("le"), "le is the histogram's bucket label")
        let family = MetricFamily(name: name, labelNames: labelNames) { Histogram(upperBounds: buckets) }
        register(name, help: help, type: "histogram", labelNames: labelNames) {
            family.all.flatMap { child in
                Self.histogramLines(name, labelNames: labelNames, values: child.values, child.metric)
            }
        }
        return family
    }

    /// `NAME_bucket{…,le="B"}` per bound and `+Inf` (cumulative), then `NAME_sum` and `NAME_count`.
    static func histogramLines(_ name: String, labelNames: [String], values: [String], _ histogram: Histogram) -> [String] {
        let snapshot = histogram.snapshot
        let bounds = histogram.upperBounds.map(PrometheusText.number) + ["+Inf"]
        var lines = zip(bounds, snapshot.cumulativeCounts).map { bound, count in
            "\(name)_bucket\(PrometheusText.labelSet(labelNames + ["le"], values + [bound])) \(count)"
        }
        let labels = PrometheusText.labelSet(labelNames, values)
        lines.append("\(name)_sum\(labels) \(PrometheusText.number(snapshot.sum))")
        lines.append("\(name)_count\(labels) \(snapshot.count)")
        return lines
    }

    /// Registers a family whose children render one sample each: `NAME{labels} value`.
    private func family<Metric: AnyObject & Sendable>(
        _ name: String, help: String, type: String, labelNames: [String], make: @escaping @Sendable () -> Metric,
        value: @escaping @Sendable (Metric) -> String
    ) -> MetricFamily<Metric> {
        let family = MetricFamily(name: name, labelNames: labelNames, make: make)
        register(name, help: help, type: type, labelNames: labelNames) {
            family.all.map { "\(name)\(PrometheusText.labelSet(labelNames, $0.values)) \(value($0.metric))" }
        }
        return family
    }

    private func register(
        _ name: String, help: String, type: String, labelNames: [String], samples: @escaping @Sendable () -> [String]
    ) {
        precondition(PrometheusText.isValidMetricName(name), "not a metric name: \(name)")
        precondition(labelNames.allSatisfy(PrometheusText.isValidLabelName), "not label names: \(labelNames)")
        lock.lock()
        defer { lock.unlock() }
        precondition(!entries.contains { $0.name == name }, "\(name) is registered already")
        entries.append(Entry(name: name, help: help, type: type, samples: samples))
    }

    /// Every metric as the Prometheus text format 0.0.4: per name, `# HELP NAME text` and `# TYPE NAME
    /// type`, then its samples (children sorted by label values), each line ended by a line feed. A
    /// family with no child yet shows its HELP and TYPE lines only.
    public func render() -> String {
        lock.lock()
        let entries = self.entries
        lock.unlock()
        var text = ""
        for entry in entries {
            text += "# HELP \(entry.name) \(PrometheusText.escapeHelp(entry.help))\n"
            text += "# TYPE \(entry.name) \(entry.type)\n"
            for line in entry.samples() { text += line + "\n" }
        }
        return text
    }
}
