#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Nanoseconds on `CLOCK_MONOTONIC` (clock_gettime(2)), the clock every bench time is measured on.
/// Only differences between readings mean anything. Safe from any thread.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Blocks the calling thread until `deadline` (nanoseconds on this clock).
    public static func sleep(until deadline: UInt64) {
        while true {
            let now = now()
            guard now < deadline else { return }
            let left = deadline - now
            var request = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
    }
}
