import Synchronization

/// A count that only goes up (Prometheus's counter): events since the process started.
///
/// Updated with one relaxed atomic add, from any thread, without a lock or an allocation; read the
/// same way at a scrape. Wraps around after 2⁶⁴ − 1.
public final class Counter: Sendable {
    private let count = Atomic<UInt64>(0)

    /// A counter at 0; made by ``MetricsRegistry/counter(_:help:)`` or a ``MetricFamily``.
    init() {}

    /// Adds `amount` (default 1).
    public func increment(by amount: UInt64 = 1) { count.wrappingAdd(amount, ordering: .relaxed) }

    /// The count now.
    public var value: UInt64 { count.load(ordering: .relaxed) }
}

/// A value that goes up and down (Prometheus's gauge): connections open now, say.
///
/// Updated with one relaxed atomic operation, from any thread, without a lock or an allocation.
public final class Gauge: Sendable {
    private let current = Atomic<Int64>(0)

    /// A gauge at 0; made by ``MetricsRegistry/gauge(_:help:)`` or a ``MetricFamily``.
    init() {}

    /// Adds `amount` (default 1).
    public func increment(by amount: Int64 = 1) { current.wrappingAdd(amount, ordering: .relaxed) }

    /// Subtracts `amount` (default 1).
    public func decrement(by amount: Int64 = 1) { current.wrappingSubtract(amount, ordering: .relaxed) }

    /// Sets the value.
    public func set(_ value: Int64) { current.store(value, ordering: .relaxed) }

    /// The value now.
    public var value: Int64 { current.load(ordering: .relaxed) }
}
