/// A first-in, first-out queue with O(1) amortised append and removal at the front, that keeps its
/// storage between uses (read and write requests come and go with every message).
struct RequestQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    subscript(offset: Int) -> Element {
        get { storage[head + offset] }
        set { storage[head + offset] = newValue }
    }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Works on the first element in place, without copying it. The queue must not be empty.
    mutating func updateFirst<R>(_ body: (inout Element) -> R) -> R { body(&storage[head]) }

    @discardableResult
    mutating func removeFirst() -> Element {
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 64)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// The offset of the first element that satisfies `predicate`, or nil.
    func firstIndex(where predicate: (Element) -> Bool) -> Int? {
        storage[head...].firstIndex(where: predicate).map { $0 - head }
    }

    /// Removes the element at `offset` (from the front), keeping the order of the others.
    mutating func remove(at offset: Int) {
        if offset == 0 {
            removeFirst()
        } else {
            storage.remove(at: head + offset)
        }
    }

    /// Empties the queue and returns what it held, in order.
    mutating func removeAll() -> [Element] {
        let remaining = Array(storage[head...])
        storage = []
        head = 0
        return remaining
    }
}
