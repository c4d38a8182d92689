import Synchronization

/// Observations counted in buckets (Prometheus's histogram): how many were at most each upper bound,
/// their sum and their count. Latencies in seconds, say.
///
/// ``observe(_:)`` is a scan of the bounds and two atomic operations (a relaxed add to the bucket, a
/// compare-and-exchange loop on the sum's bits), from any thread, without a lock or an allocation. A
/// scrape during observations may see a bucket counted before the sum has the value; each bucket, and
/// the count, is never torn.
public final class Histogram: @unchecked Sendable {
    /// The buckets' upper bounds, ascending, finite; the `+Inf` bucket is implied.
    public let upperBounds: [Double]
    /// One count per bound, then the `+Inf` bucket: observations in each bucket alone (not cumulative).
    private let counts: UnsafeMutablePointer<Atomic<UInt64>>
    /// The sum of the observations, as `Double` bits.
    private let sumBits = Atomic<UInt64>(0)

    /// A histogram with `upperBounds` (ascending, finite); made by ``MetricsRegistry/histogram(_:help:buckets:)``.
    init(upperBounds: [Double]) {
        precondition(zip(upperBounds, upperBounds.dropFirst()).allSatisfy { $0 < $1 }, "histogram bounds must ascend")
        precondition(upperBounds.allSatisfy(\.isFinite), "histogram bounds must be finite (+Inf is implied)")
        self.upperBounds = upperBounds
        counts = .allocate(capacity: upperBounds.count + 1)
        for index in 0...upperBounds.count { (counts + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: upperBounds.count + 1)
        counts.deallocate()
    }

    /// Counts `value` in the first bucket whose bound is at least `value` (`+Inf` when none), and adds it
    /// to the sum. NaN goes to `+Inf` and makes the sum NaN, as Prometheus's clients do.
    public func observe(_ value: Double) {
        var index = 0
        while index < upperBounds.count, !(value <= upperBounds[index]) { index += 1 }
        counts[index].wrappingAdd(1, ordering: .relaxed)
        var old = sumBits.load(ordering: .relaxed)
        while true {
            let new = (Double(bitPattern: old) + value).bitPattern
            let (exchanged, original) = sumBits.weakCompareExchange(
                expected: old, desired: new, successOrdering: .relaxed, failureOrdering: .relaxed)
            if exchanged { return }
            old = original
        }
    }

    /// Observes `duration` in seconds.
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// What a scrape reads: cumulative counts per bound and for `+Inf`, the sum and the count.
    public var snapshot: Snapshot {
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(upperBounds.count + 1)
        var total: UInt64 = 0
        for index in 0...upperBounds.count {
            total &+= counts[index].load(ordering: .relaxed)
            cumulative.append(total)
        }
        return Snapshot(cumulativeCounts: cumulative, sum: Double(bitPattern: sumBits.load(ordering: .relaxed)), count: total)
    }

    /// A histogram's values at one moment.
    public struct Snapshot: Equatable, Sendable {
        /// Observations at most each bound, then all of them (the `+Inf` bucket).
        public var cumulativeCounts: [UInt64]
        /// The sum of the observations.
        public var sum: Double
        /// How many were observed: the `+Inf` bucket's count.
        public var count: UInt64
    }
}
