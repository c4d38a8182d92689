import Foundation

/// One metric name with its label names, and one child metric per set of label values
/// (`chat_logins_total{result="accepted"}`, `{result="badPassword"}`, …).
///
/// ``labels(_:)`` finds or makes a child under a lock: take the children the hot path needs once, at
/// setup, and keep them; updating a child takes no lock.
public final class MetricFamily<Metric: AnyObject & Sendable>: @unchecked Sendable {
    /// The metric's name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
    public let name: String
    /// The label names (`[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`), in the order values are given.
    public let labelNames: [String]
    private let make: @Sendable () -> Metric
    private let lock = NSLock()
    private var children: [[String]: Metric] = [:]

    init(name: String, labelNames: [String], make: @escaping @Sendable () -> Metric) {
        self.name = name
        self.labelNames = labelNames
        self.make = make
    }

    /// The child for `values`, one per label name in order (any UTF-8; escaped when rendered), made at
    /// 0 on first use.
    public func labels(_ values: String...) -> Metric { labels(values) }

    /// The child for `values`, one per label name in order, made at 0 on first use.
    public func labels(_ values: [String]) -> Metric {
        precondition(values.count == labelNames.count, "\(name) has \(labelNames.count) labels, given \(values.count) values")
        lock.lock()
        defer { lock.unlock() }
        if let child = children[values] { return child }
        let child = make()
        children[values] = child
        return child
    }

    /// Every child with its label values, sorted by the values (the order a scrape shows them in).
    public var all: [(values: [String], metric: Metric)] {
        lock.lock()
        defer { lock.unlock() }
        return children.map { (values: $0.key, metric: $0.value) }.sorted { $0.values.lexicographicallyPrecedes($1.values) }
    }
}
