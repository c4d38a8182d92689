#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's resource limits, as servers holding many connections need them.
public enum ResourceLimits {
    /// Raises the soft limit on open files (`RLIMIT_NOFILE`, getrlimit(2)) to the hard limit: one
    /// descriptor per connection. Leaves it as it was if that fails.
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The soft limit on open files (`RLIMIT_NOFILE`), or nil when it cannot be read.
    public static func openFileLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }
}
