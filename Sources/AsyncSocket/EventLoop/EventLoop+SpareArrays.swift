/// Arrays lent to the sockets of one loop for a single pass of work: a pass that completes reads (or
/// writes) starts with an empty array (`[]`, no storage), borrows a spare on its first ``append(_:to:)``,
/// delivers what it holds and gives it back emptied. So an idle connection holds none, a busy loop
/// reuses a few with no allocation, and a pass that completes nothing (a read that goes on) borrows
/// nothing. A pass nested in a delegate callback (another socket's reads, say) borrows another one.
/// Loop thread only.
struct SpareArrays<Element> {
    private var spares: [[Element]] = []

    /// Arrays kept for reuse; more are freed on return.
    private static var maxSpares: Int { 4 }
    /// Elements an array may hold room for and still be kept.
    private static var maxKeptCapacity: Int { 4096 }

    /// Appends `element` to `array`, which starts as `[]`: when `array` has no storage yet, a spare
    /// (with room from earlier use) takes its place first.
    @inline(__always)
    mutating func append(_ element: Element, to array: inout [Element]) {
        if array.capacity == 0, let spare = spares.popLast() { array = spare }
        array.append(element)
    }

    /// Takes `array` back for reuse, emptied; leaves `array` empty without storage. Nothing to do for
    /// an array that never had storage.
    mutating func giveBack(_ array: inout [Element]) {
        guard array.capacity > 0 else { return }
        array.removeAll(keepingCapacity: true)
        if spares.count < Self.maxSpares && array.capacity <= Self.maxKeptCapacity { spares.append(array) }
        array = []
    }
}
