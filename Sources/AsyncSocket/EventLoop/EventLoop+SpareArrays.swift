/// Arrays lent to the sockets of one loop for a single pass of work: a pass that completes reads (or
/// writes) borrows an array, fills it, delivers what it holds and gives it back emptied. So an idle
/// connection holds none, and a busy loop reuses a few with no allocation. A pass nested in a delegate
/// callback (another socket's reads, say) borrows another one. Loop thread only.
struct SpareArrays<Element> {
    private var spares: [[Element]] = []

    /// Arrays kept for reuse; more are freed on return.
    private static var maxSpares: Int { 4 }
    /// Elements an array may hold room for and still be kept.
    private static var maxKeptCapacity: Int { 4096 }

    /// An empty array, with room from earlier use when there is a spare.
    mutating func borrow() -> [Element] { spares.popLast() ?? [] }

    /// Takes `array` back for reuse, emptied; leaves `array` empty without storage.
    mutating func giveBack(_ array: inout [Element]) {
        array.removeAll(keepingCapacity: true)
        if spares.count < Self.maxSpares && array.capacity <= Self.maxKeptCapacity { spares.append(array) }
        array = []
    }
}
