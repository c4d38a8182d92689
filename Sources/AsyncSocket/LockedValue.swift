#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a `pthread_mutex_t` (pthread_mutex_lock(3)), like SwiftNIO's `NIOLockedValueBox`:
/// a reference to one heap object that holds both (copies share the value and the lock), so a
/// connection's locked state costs one allocation.
///
/// The library uses it rather than the standard library's `Mutex` because ThreadSanitizer understands
/// pthread mutexes, so `swift test --sanitize=thread` reports real races only.
public struct LockedValue<Value>: @unchecked Sendable {
    /// The mutex as the header and the value as the single element, in one allocation: the mutex
    /// has a stable address there, as `pthread_mutex_t` requires. (The value is not the header: an
    /// empty value, `LockedValue(())`, then sat at the object's own address, and ThreadSanitizer took
    /// each `withLock` for a write racing with the reads of the object's header.)
    private final class Storage: ManagedBuffer<pthread_mutex_t, Value> {
        deinit {
            withUnsafeMutablePointers { mutex, value in
                value.deinitialize(count: 1)
                pthread_mutex_destroy(mutex)
            }
        }
    }

    private let storage: Storage

    /// Guards `value`.
    public init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in pthread_mutex_t() }
        storage = unsafeDowncast(buffer, to: Storage.self)
        storage.withUnsafeMutablePointers { mutex, element in
            element.initialize(to: value)
            pthread_mutex_init(mutex, nil)
        }
    }

    /// Runs `body` with the value while holding the lock. `body` must not call back into this lock.
    @inline(__always)
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { mutex, value throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
