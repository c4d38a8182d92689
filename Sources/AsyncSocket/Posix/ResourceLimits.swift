import CAsyncSocketShims
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

    /// Descriptors a server keeps for everything but its connections: the listening socket, the event
    /// loops' epoll and wake-up descriptors, standard input and output, a database file with its journal
    /// or WAL and shared-memory files, discovery sockets, and headroom. 64.
    public static let reservedDescriptors = 64

    /// Keeps the C library to at most `count` malloc arenas (glibc: mallopt(3) `M_ARENA_MAX`; its
    /// default is 8 per core). Each thread that allocates gets an arena of its own up to that limit, and
    /// each arena keeps its freed memory for reuse by its threads: a server whose work runs on many
    /// threads (Dispatch queues that block, say) holds more memory per connection with many arenas.
    /// Call it at the start of the process, before other threads allocate. Returns whether it was set
    /// (false where the C library has no such option).
    @discardableResult
    public static func limitMallocArenas(to count: Int) -> Bool {
        cass_limit_malloc_arenas(Int32(clamping: count)) == 1
    }

    /// Gives the kernel back every whole free page of the C library's heap (glibc: malloc_trim(3) with
    /// a pad of 0, which releases free pages inside the heap with madvise(2) `MADV_DONTNEED`, not only
    /// its top). The process's RSS falls by what the heap keeps free for reuse; the pages come back,
    /// zeroed, when allocations need them again. Holds each malloc arena's lock while it walks the
    /// arena: milliseconds for tens of megabytes, so call it after a burst of connections, not per
    /// connection (``HeapTrimmer`` does, by ``HeapTrimPolicy``). Any thread. Returns whether memory
    /// was released (false where the C library has no such call).
    @discardableResult
    public static func releaseFreeHeapMemory() -> Bool {
        cass_release_free_heap_memory() == 1
    }

    /// The most connections a server should hold at once with `openFileLimit` descriptors: one each,
    /// after ``reservedDescriptors``, and at most 10,000; at least 1. `nil` (the limit cannot be read or
    /// is unlimited) gives 10,000. With the usual soft limit of 1,024: 960.
    public static func maxConnections(openFileLimit: UInt64?) -> Int {
        guard let openFileLimit, openFileLimit < UInt64(Int.max) else { return 10_000 }
        return max(1, min(10_000, Int(openFileLimit) - reservedDescriptors))
    }

    /// ``maxConnections(openFileLimit:)`` for this process's soft limit now (``openFileLimit()``): the
    /// default connection limit of a `LongLinkServer`. Raise the soft limit first
    /// (``raiseOpenFileLimit()``) for a larger one.
    public static func defaultMaxConnections() -> Int {
        maxConnections(openFileLimit: openFileLimit())
    }
}
