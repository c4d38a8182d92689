import Testing
import TestSupport
@testable import SocketBench

@Suite struct LatencyHistogramTests {
    @Test func bucketsAreExactBelow128AndLogLinearAbove() {
        #expect(LatencyHistogram.bucket(of: 0) == 0)
        #expect(LatencyHistogram.bucket(of: 127) == 127)
        #expect(LatencyHistogram.bucket(of: 128) == 128)
        #expect(LatencyHistogram.bucket(of: 129) == 128)
        #expect(LatencyHistogram.bucket(of: 130) == 129)
        #expect(LatencyHistogram.bucket(of: 255) == 191)
        #expect(LatencyHistogram.bucket(of: 256) == 192)
        #expect(LatencyHistogram.bucket(of: 10_000) == 526)
        #expect(LatencyHistogram.bucket(of: (1 << 49) - 1) == LatencyHistogram.bucketCount - 1)
        #expect(LatencyHistogram.bucket(of: UInt64.max) == LatencyHistogram.bucketCount - 1)
        #expect(LatencyHistogram.bucketCount == 2_816)
    }

    @Test func boundsGiveTheLowestValueAndTheMidpoint() {
        #expect(LatencyHistogram.bounds(of: 127) == (127, 127))
        #expect(LatencyHistogram.bounds(of: 128) == (128, 129))
        #expect(LatencyHistogram.bounds(of: 192) == (256, 258))
        #expect(LatencyHistogram.bounds(of: 526) == (9_984, 10_048))
    }

    @Test func everyValueLiesInItsBucketWhichIsAtMostOneSixtyFourthWide() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            let value = random.next() >> (15 + random.next() % 49)  // 0 ..< 2^49: below the last bucket's top
            let bucket = LatencyHistogram.bucket(of: value)
            let lowest = LatencyHistogram.bounds(of: bucket).lowest
            let next = bucket + 1 < LatencyHistogram.bucketCount ? LatencyHistogram.bounds(of: bucket + 1).lowest : 1 << 49
            #expect(lowest <= value && value < next, "\(value) in bucket \(bucket)")
            #expect(value < 128 || (next - lowest) * 64 <= lowest, "bucket \(bucket) too wide")
        }
    }

    @Test func percentilesOfExactValuesAreTheRankedSample() {
        var histogram = LatencyHistogram()
        for value in 1...100 as ClosedRange<UInt64> { histogram.record(value) }
        #expect(histogram.count == 100)
        #expect(histogram.percentile(0) == 1)
        #expect(histogram.percentile(0.5) == 51)  // rank ⌊0.5 × 100⌋ = 50, 0-based
        #expect(histogram.percentile(0.99) == 100)
        #expect(histogram.percentile(0.999) == 100)
        #expect(histogram.percentile(1) == 100)
        #expect(histogram.max == 100 && histogram.sum == 5_050 && histogram.mean == 50.5)
    }

    @Test func percentilesReportTheBucketMidpointCappedAtTheMaximum() {
        var histogram = LatencyHistogram()
        for _ in 0..<990 { histogram.record(100) }
        for _ in 0..<9 { histogram.record(10_000) }
        histogram.record(1_000_000)
        #expect(histogram.percentile(0.5) == 100)
        #expect(histogram.percentile(0.99) == 10_048)  // rank 990: bucket 9,984 ..< 10,112
        #expect(histogram.percentile(0.999) == 1_000_000)  // midpoint 1,003,520 capped at the maximum
    }

    @Test func anEmptyHistogramReportsZero() {
        let histogram = LatencyHistogram()
        #expect(histogram.percentile(0.5) == 0 && histogram.percentile(0.99) == 0 && histogram.mean == 0)
    }

    @Test func mergingEqualsRecordingEverythingInOne() {
        var all = LatencyHistogram(), first = LatencyHistogram(), second = LatencyHistogram()
        var random = SplitMix64(seed: 11)
        for index in 0..<1_000 {
            let value = random.next() % 5_000_000
            all.record(value)
            if index % 3 == 0 { first.record(value) } else { second.record(value) }
        }
        first.merge(second)
        #expect(first == all)
    }
}
