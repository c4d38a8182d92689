/// Exact percentiles of a run's latencies: every sample is kept (a run has at most a few million),
/// sorted once.
public struct Percentiles: Sendable, Equatable {
    private let sorted: [UInt64]

    /// The percentiles of `samples` (nanoseconds).
    public init(_ samples: [UInt64]) { sorted = samples.sorted() }

    /// Samples.
    public var count: Int { sorted.count }

    /// The `fraction` quantile in nanoseconds (0.5 = median, 0.99 = p99): the sample of 0-based rank
    /// ⌊fraction × count⌋ in sorted order (at most count − 1). 0 when there are no samples.
    public func value(_ fraction: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Swift.min(Int(Swift.max(0, fraction) * Double(sorted.count)), sorted.count - 1)
        return sorted[rank]
    }

    /// The largest sample, nanoseconds (0 when none).
    public var max: UInt64 { sorted.last ?? 0 }

    /// `fraction`'s quantile in microseconds.
    public func microseconds(_ fraction: Double) -> Double { Double(value(fraction)) / 1e3 }
}
