import ChatProtocol

/// Names by their ``UserName/Key``s, to find the one a name is too similar to: the users of an
/// ``InMemoryMessageStore``, the router's users online. Not thread-safe (a value; its owner locks).
struct NameIndex {
    private var folded: [String: String] = [:]
    private var cased: [String: String] = [:]

    /// The name in the index that the name of `key` is too similar to (either part of the keys equal;
    /// the folded part first), or nil.
    func similar(to key: UserName.Key) -> String? { folded[key.folded] ?? cased[key.cased] }

    /// Adds `name`, whose key is `key`. A name already there under either part keeps that part.
    mutating func insert(_ name: String, key: UserName.Key) {
        if folded[key.folded] == nil { folded[key.folded] = name }
        if cased[key.cased] == nil { cased[key.cased] = name }
    }

    /// Removes `name`, whose key is `key`, from the parts it holds.
    mutating func remove(_ name: String, key: UserName.Key) {
        if folded[key.folded] == name { folded[key.folded] = nil }
        if cased[key.cased] == name { cased[key.cased] = nil }
    }
}
