/// A log-linear histogram of latencies in nanoseconds, the same buckets and percentile rule as
/// `shared/bench/loadgen.c` (so the two report comparable figures): values 0...127 ns each have a bucket
/// of their own; above that every power of two is split into 64 equal buckets, so a bucket is at most
/// 1/64 (1.6 %) of its values wide. Values of 2^49 ns (about 6.5 days) and more share the last bucket.
///
/// Fixed size (2,816 counters, 22 KiB) however many samples it records. Not thread-safe: each event-loop
/// thread records into its own and ``merge(_:)`` combines them at the end.
public struct LatencyHistogram: Equatable, Sendable {
    /// Values below this have a bucket each: 128.
    static let exactLimit: UInt64 = 128
    /// Buckets per power of two above ``exactLimit``: 64.
    static let bucketsPerOctave = 64
    /// Powers of two above ``exactLimit`` with buckets of their own: 42.
    static let octaves = 42
    /// Number of buckets: 128 + 42 × 64 = 2,816.
    static let bucketCount = Int(exactLimit) + octaves * bucketsPerOctave

    private(set) var buckets = [UInt64](repeating: 0, count: bucketCount)
    /// Samples recorded.
    public private(set) var count: UInt64 = 0
    /// Largest sample, nanoseconds (0 when empty).
    public private(set) var max: UInt64 = 0
    /// Sum of the samples, nanoseconds.
    public private(set) var sum: UInt64 = 0

    /// An empty histogram.
    public init() {}

    /// The bucket of `value` nanoseconds.
    static func bucket(of value: UInt64) -> Int {
        if value < exactLimit { return Int(value) }
        let highestBit = 63 - value.leadingZeroBitCount
        let shift = highestBit - 6  // ≥ 1: keeps the top 7 bits, of which the lower 6 pick the bucket
        if shift > octaves { return bucketCount - 1 }
        return Int(exactLimit) + (shift - 1) * bucketsPerOctave + Int((value >> UInt64(shift)) - UInt64(bucketsPerOctave))
    }

    /// The smallest value in `bucket` and the value it reports (its midpoint, rounded down), nanoseconds.
    static func bounds(of bucket: Int) -> (lowest: UInt64, reported: UInt64) {
        if bucket < Int(exactLimit) { return (UInt64(bucket), UInt64(bucket)) }
        let shift = (bucket - Int(exactLimit)) / bucketsPerOctave + 1
        let lowest = UInt64((bucket - Int(exactLimit)) % bucketsPerOctave + bucketsPerOctave) << UInt64(shift)
        return (lowest, lowest + (UInt64(1) << UInt64(shift)) / 2)
    }

    /// Records one latency of `nanoseconds`.
    public mutating func record(_ nanoseconds: UInt64) {
        buckets[LatencyHistogram.bucket(of: nanoseconds)] &+= 1
        count &+= 1
        sum &+= nanoseconds
        if nanoseconds > max { max = nanoseconds }
    }

    /// Adds every sample of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        for index in buckets.indices { buckets[index] &+= other.buckets[index] }
        count &+= other.count
        sum &+= other.sum
        if other.max > max { max = other.max }
    }

    /// The `fraction` quantile (0.5 = median, 0.99 = p99) in nanoseconds, as loadgen computes it: the
    /// sample of rank ⌊fraction × count⌋ (0-based, at most count − 1) in sorted order, reported as its
    /// bucket's midpoint but never above the largest sample. 0 when empty.
    public func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let wanted = Swift.min(UInt64(Swift.max(0, fraction) * Double(count)), count - 1)
        var seen: UInt64 = 0
        for (index, samples) in buckets.enumerated() where samples > 0 {
            seen += samples
            if seen > wanted { return Swift.min(LatencyHistogram.bounds(of: index).reported, max) }
        }
        return max
    }

    /// The mean sample in nanoseconds (0 when empty).
    public var mean: Double { count == 0 ? 0 : Double(sum) / Double(count) }
}
