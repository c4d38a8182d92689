/// A first-in, first-out queue with O(1) amortised append and removal at the front, that keeps its
/// storage between uses (read and write requests come and go with every message).
///
/// The first element lives inline and only the ones behind it in an array: a connection usually has
/// one read queued (or one that goes on for its whole life) and one write at a time, so an idle
/// connection holds no array for either queue.
struct RequestQueue<Element> {
    private var head: Element?
    private var rest: [Element] = []
    private var restStart = 0

    var isEmpty: Bool { head == nil }
    var count: Int { head == nil ? 0 : 1 + rest.count - restStart }
    /// A copy of the first element. On the per-message path use ``withFirst(_:)``, which copies only
    /// what it reads (a request holds closures and buffers: a copy retains and releases each).
    var first: Element? { head }

    /// What `body` reads from the first element, without copying the element; nil when empty.
    @inline(__always)
    func withFirst<R>(_ body: (Element) -> R) -> R? {
        switch head {
        case .some(let element): return body(element)
        case .none: return nil
        }
    }

    /// What `body` reads from the element at `offset` (from the front, less than ``count``), without
    /// copying the element.
    @inline(__always)
    func withElement<R>(at offset: Int, _ body: (Element) -> R) -> R {
        if offset == 0, case .some(let element) = head { return body(element) }
        return body(rest[restStart + offset - 1])
    }

    subscript(offset: Int) -> Element {
        get {
            if offset == 0, let head { return head }
            return rest[restStart + offset - 1]
        }
        set {
            if offset == 0 { head = newValue } else { rest[restStart + offset - 1] = newValue }
        }
    }

    mutating func append(_ element: Element) {
        if head == nil { head = element } else { rest.append(element) }
    }

    /// Works on the first element in place, without copying it. The queue must not be empty.
    mutating func updateFirst<R>(_ body: (inout Element) -> R) -> R {
        guard head != nil else { preconditionFailure("updateFirst on an empty RequestQueue") }
        return body(&head!)
    }

    /// Works on the last element in place, without copying it; nil when the queue is empty.
    mutating func updateLast<R>(_ body: (inout Element) -> R) -> R? {
        if restStart < rest.count { return body(&rest[rest.count - 1]) }
        guard head != nil else { return nil }
        return body(&head!)
    }

    @discardableResult
    mutating func removeFirst() -> Element {
        guard let element = head else { preconditionFailure("removeFirst on an empty RequestQueue") }
        if restStart == rest.count {
            head = nil
            return element
        }
        head = rest[restStart]
        restStart += 1
        if restStart == rest.count {
            rest.removeAll(keepingCapacity: rest.capacity <= 64)
            restStart = 0
        } else if restStart >= 64 && restStart * 2 >= rest.count {
            rest.removeFirst(restStart)
            restStart = 0
        }
        return element
    }

    /// The offset of the first element that satisfies `predicate`, or nil.
    func firstIndex(where predicate: (Element) -> Bool) -> Int? {
        guard let head else { return nil }
        if predicate(head) { return 0 }
        return rest[restStart...].firstIndex(where: predicate).map { $0 - restStart + 1 }
    }

    /// Removes the element at `offset` (from the front), keeping the order of the others.
    mutating func remove(at offset: Int) {
        if offset == 0 {
            removeFirst()
        } else {
            rest.remove(at: restStart + offset - 1)
        }
    }

    /// Empties the queue and returns what it held, in order.
    mutating func removeAll() -> [Element] {
        guard let head else { return [] }
        let remaining = [head] + rest[restStart...]
        self.head = nil
        rest = []
        restStart = 0
        return remaining
    }
}
