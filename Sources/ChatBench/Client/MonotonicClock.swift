#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on `CLOCK_MONOTONIC` (clock_gettime(2)), the clock every chat-bench time is measured
/// on; the client's event loop uses the same clock. Only differences between readings mean anything.
/// Safe from any thread.
enum MonotonicClock {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
