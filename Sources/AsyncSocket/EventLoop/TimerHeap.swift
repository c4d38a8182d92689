/// A timer in an event loop's heap. Confined to the loop thread except for ``cancelled``'s reads.
final class TimerEntry {
    /// Monotonic deadline in nanoseconds (``EventLoop/now()``).
    let deadline: UInt64
    /// Insertion order, so timers with equal deadlines fire first in, first out.
    let sequence: UInt64
    var task: (() -> Void)?
    /// Position in the heap's array, or -1 when not in the heap.
    var heapIndex = -1

    init(deadline: UInt64, sequence: UInt64, task: @escaping () -> Void) {
        self.deadline = deadline
        self.sequence = sequence
        self.task = task
    }

    func firesBefore(_ other: TimerEntry) -> Bool {
        deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
    }
}

/// A binary min-heap of timers by deadline that can remove any entry in O(log n), so cancelled
/// timeouts leave at once instead of piling up until their deadline.
struct TimerHeap {
    private var entries: [TimerEntry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    /// The timer that fires next.
    var first: TimerEntry? { entries.first }

    mutating func insert(_ entry: TimerEntry) {
        entry.heapIndex = entries.count
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    /// Removes `entry` if it is in the heap.
    mutating func remove(_ entry: TimerEntry) {
        let index = entry.heapIndex
        guard index >= 0, index < entries.count, entries[index] === entry else { return }
        let last = entries.count - 1
        if index != last { swapAt(index, last) }
        entries.removeLast()
        entry.heapIndex = -1
        if index < entries.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Removes and returns the first timer if its deadline is at or before `now`.
    mutating func popExpired(now: UInt64) -> TimerEntry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        remove(first)
        return first
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        entries[a].heapIndex = a
        entries[b].heapIndex = b
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].firesBefore(entries[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            var smallest = left
            let right = left + 1
            if right < entries.count, entries[right].firesBefore(entries[left]) { smallest = right }
            guard entries[smallest].firesBefore(entries[parent]) else { return }
            swapAt(smallest, parent)
            parent = smallest
        }
    }
}
