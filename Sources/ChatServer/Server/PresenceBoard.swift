/// Who is online, kept sorted, and who came or went since the last presence tick (internal; owned by
/// the ``Router``, used on its queue). Pure: no sockets, no clock, so the coalescing is tested directly.
///
/// - The roster is a sorted array of names (Swift `String` order: Unicode code points of the
///   canonically composed text): insert and remove by binary search (one `memmove` of the array, a few
///   microseconds at 10,000 names), so a `who` page or the first names of a login reply cost
///   O(log n + page), never a sort.
/// - The changes remember, per name, whether it was online at the last tick and the number of the
///   latest event that changed it; ``takeTick(listed:legacy:)`` returns the net changes (a login and a
///   logout of one name within a tick cancel out), sorted.
struct PresenceBoard {
    /// One name's changes since the last tick.
    struct Change {
        /// Online at the last tick?
        let wasOnline: Bool
        /// The numbers of the first and the latest login or logout of this name in this tick (see
        /// ``PresenceBoard/event``).
        let firstEvent: UInt64
        var lastEvent: UInt64
    }

    /// The net changes of one tick.
    struct Tick: Equatable {
        /// Names that came online (were offline at the last tick, online now), sorted.
        var online: [String]
        /// Names that went offline, sorted.
        var offline: [String]
        /// The first `listed` changed names in code-point order, split into those online and offline.
        var listedOnline: [String]
        var listedOffline: [String]
        /// How many changed names were not listed.
        var unlisted: Int
        /// The first `legacy` changes in code-point order, each with its latest event number, for
        /// sessions that get one `presence` message per change.
        var legacy: [(name: String, online: Bool, event: UInt64)]
        /// The first `legacy` names whose changes cancelled out (online at the last tick and now, or at
        /// neither), with the numbers of their first and latest event in this tick: a session that
        /// logged in between (its login reply showed the state in between) must be told the state now.
        var reverted: [(name: String, online: Bool, firstEvent: UInt64, lastEvent: UInt64)] = []

        static func == (lhs: Tick, rhs: Tick) -> Bool {
            lhs.online == rhs.online && lhs.offline == rhs.offline && lhs.listedOnline == rhs.listedOnline
                && lhs.listedOffline == rhs.listedOffline && lhs.unlisted == rhs.unlisted
                && lhs.legacy.map(\.name) == rhs.legacy.map(\.name) && lhs.legacy.map(\.online) == rhs.legacy.map(\.online)
                && lhs.legacy.map(\.event) == rhs.legacy.map(\.event)
                && lhs.reverted.map { "\($0.name) \($0.online) \($0.firstEvent) \($0.lastEvent)" }
                    == rhs.reverted.map { "\($0.name) \($0.online) \($0.firstEvent) \($0.lastEvent)" }
        }
    }

    /// The names online now, sorted.
    private(set) var roster: [String] = []
    /// Changes since the last tick, by name.
    private var changes: [String: Change] = [:]
    /// The number of the latest login or logout (from 1); a session logged in at event `n` has seen, in
    /// its login reply, every change numbered `n` or lower.
    private(set) var event: UInt64 = 0

    /// True when something changed since the last tick (possibly changes that cancel out).
    var hasChanges: Bool { !changes.isEmpty }

    /// How many users are online.
    var count: Int { roster.count }

    /// `name` logged in (it was not online). Returns the event's number.
    @discardableResult
    mutating func loggedIn(_ name: String) -> UInt64 {
        let index = position(of: name)
        if index == roster.count || roster[index] != name { roster.insert(name, at: index) }
        return note(name, wasOnline: false)
    }

    /// `name` logged out (it was online). Returns the event's number.
    @discardableResult
    mutating func loggedOut(_ name: String) -> UInt64 {
        let index = position(of: name)
        if index < roster.count, roster[index] == name { roster.remove(at: index) }
        return note(name, wasOnline: true)
    }

    private mutating func note(_ name: String, wasOnline: Bool) -> UInt64 {
        event += 1
        if changes[name] == nil {
            changes[name] = Change(wasOnline: wasOnline, firstEvent: event, lastEvent: event)
        } else {
            changes[name]?.lastEvent = event
        }
        return event
    }

    /// True when `name` is online.
    func contains(_ name: String) -> Bool {
        let index = position(of: name)
        return index < roster.count && roster[index] == name
    }

    /// The index of the first name not below `name` (binary search).
    private func position(of name: String) -> Int {
        var low = 0, high = roster.count
        while low < high {
            let middle = (low + high) / 2
            if roster[middle] < name { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Up to `limit` names online strictly after `after` (from the first when `nil`), and whether more
    /// follow them.
    func page(after: String?, limit: Int) -> (names: [String], more: Bool) {
        var start = 0
        if let after {
            start = position(of: after)
            if start < roster.count, roster[start] == after { start += 1 }
        }
        let end = min(roster.count, start + max(0, limit))
        return (Array(roster[start..<end]), end < roster.count)
    }

    /// The first `limit` names online other than `name`, for a login reply.
    func first(_ limit: Int, excluding name: String) -> [String] {
        var names: [String] = []
        names.reserveCapacity(min(limit, roster.count))
        for other in roster where other != name {
            guard names.count < limit else { break }
            names.append(other)
        }
        return names
    }

    /// The net changes since the last tick, and starts the next one: names whose state differs from the
    /// last tick, sorted; the first `listed` of them (in code-point order) as the listed ones, the rest
    /// counted as unlisted; the first `legacy` with their latest event number; and the first `legacy`
    /// changes that cancelled out (``Tick/reverted``).
    mutating func takeTick(listed: Int, legacy: Int) -> Tick {
        var changed: [(name: String, online: Bool, event: UInt64)] = []
        var reverted: [(name: String, online: Bool, firstEvent: UInt64, lastEvent: UInt64)] = []
        changed.reserveCapacity(changes.count)
        for (name, change) in changes {
            let online = contains(name)
            if online != change.wasOnline {
                changed.append((name, online, change.lastEvent))
            } else if change.firstEvent < change.lastEvent {
                reverted.append((name, online, change.firstEvent, change.lastEvent))
            }
        }
        changes = [:]
        changed.sort { $0.name < $1.name }
        reverted.sort { $0.name < $1.name }
        let shown = changed.prefix(listed)
        return Tick(
            online: changed.filter(\.online).map(\.name),
            offline: changed.filter { !$0.online }.map(\.name),
            listedOnline: shown.filter(\.online).map(\.name),
            listedOffline: shown.filter { !$0.online }.map(\.name),
            unlisted: changed.count - shown.count,
            legacy: Array(changed.prefix(legacy)),
            reverted: Array(reverted.prefix(legacy)))
    }
}
