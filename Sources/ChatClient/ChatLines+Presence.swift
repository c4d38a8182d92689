/// The lines of presence batches and `/who` pages (``ClientOptions/help`` documents them).
extension ChatLines {
    /// Most names a terminal line of a presence batch shows before "and N others": 5.
    static let maxNamesShown = 5

    /// A `presenceChanges` batch as at most three lines, leaving out my own name (my own login, in the
    /// tick I logged in): who joined, who left, how many changes were not listed. Terminal:
    /// `* ann, bob, carl, dan, eve and 3 others joined`, `* zed left`; pipe, every name listed, separated
    /// by spaces (names never contain one): `* joined: ann bob carl dan eve fay gus hal`, `* left: zed`. Both:
    /// `* 205 more joined or left; 1234 online` when some were not listed.
    func presenceChanges(online: [String], offline: [String], onlineCount: Int, unlisted: Int) -> [String] {
        var lines: [String] = []
        let joined = online.filter { $0 != me }
        if !joined.isEmpty { lines.append(presenceLine(joined, verb: "joined")) }
        if !offline.isEmpty { lines.append(presenceLine(offline, verb: "left")) }
        if unlisted > 0 { lines.append("* \(unlisted) more joined or left; \(onlineCount) online") }
        return lines
    }

    private func presenceLine(_ names: [String], verb: String) -> String {
        let safe = names.map(shown)
        switch style {
        case .pipe:
            return "* \(verb): \(safe.joined(separator: " "))"
        case .terminal:
            let listed = safe.prefix(Self.maxNamesShown)
            let others = safe.count - listed.count
            let list: String
            if others > 0 {
                list = listed.joined(separator: ", ") + " and \(others) \(others == 1 ? "other" : "others")"
            } else if listed.count == 1 {
                list = listed[0]
            } else {
                list = listed.dropLast().joined(separator: ", ") + " and " + listed[listed.count - 1]
            }
            return "* \(list) \(verb)"
        }
    }

    /// A `/who` page: terminal `* online (1234): ann, bob, carl; /who more for the next page`
    /// (without the hint on the last page); pipe `online 1234 more: ann bob carl` or, on the last page,
    /// `online 1234 end: ann bob carl` (names separated by spaces; none after the colon on an empty page).
    func onlineUsers(names: [String], onlineCount: Int, more: Bool) -> String {
        let safe = names.map(shown)
        switch style {
        case .pipe:
            return "online \(onlineCount) \(more ? "more" : "end"):" + safe.map { " " + $0 }.joined()
        case .terminal:
            let list = safe.isEmpty ? "nobody further" : safe.joined(separator: ", ")
            return "* online (\(onlineCount)): \(list)\(more ? "; /who more for the next page" : "")"
        }
    }

    /// `/who more` after the last page: `* no more names; /who starts from the first`.
    func noMoreOnline() -> String { "* no more names; /who starts from the first" }
}
