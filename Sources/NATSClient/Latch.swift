import Foundation

/// A gate that opens once and stays open: ``wait()`` blocks until ``open()`` has been called (by any
/// thread, before or after). Used to wait for libnats' delivery thread or our watcher thread to finish.
final class Latch: Sendable {
    // NSCondition is documented thread-safe; `isOpen` is read and written only while holding it.
    private let condition = NSCondition()
    private nonisolated(unsafe) var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}
