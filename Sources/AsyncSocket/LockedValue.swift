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
    /// The value as the header and the mutex as the single element, in one allocation: the mutex
    /// has a stable address there, as `pthread_mutex_t` requires.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }

    private let storage: Storage

    /// Guards `value`.
    public init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in value }
        storage = unsafeDowncast(buffer, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }
    }

    /// Runs `body` with the value while holding the lock. `body` must not call back into this lock.
    @inline(__always)
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { value, mutex throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
