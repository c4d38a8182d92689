/// A user online on another node, as ``ClusterLink/remote`` keeps it (internal; routing queue): the
/// node's id and the resume token's hash of its presence bucket value (``ClusterLink/Presence``), in 40
/// bytes inline, without a heap block of its own.
///
/// A node holds one for every user of every other node (at 100,000 users on 7 nodes, ~85,700 of them):
/// the hash as 64 characters of text cost a heap block of 112 bytes each, and the node's id and the
/// text 32 bytes in the dictionary. Here the hash's 256 bits are inline, and the node is one shared
/// ``Origin`` per node (``ClusterLink``'s node table); a token that is not such a hash (which no node
/// writes) is kept as its text in an ``Origin`` of its own.
struct RemoteUser: Equatable, Sendable {
    /// The node of a remote user, shared by the entries of its users; with the token's text when that
    /// is not 64 lowercase hexadecimal digits (then the entry's own). Immutable.
    final class Origin: Sendable {
        /// The node's id (its `--node-id`).
        let node: String
        /// The token hash's text when it is not kept as bits (``TokenHash/text(_:)``), else nil.
        let text: String?

        init(node: String, text: String? = nil) {
            self.node = node
            self.text = text
        }
    }

    /// The hash's 256 bits, most significant first; zero when ``origin`` has the token's text.
    private let first: UInt64, second: UInt64, third: UInt64, fourth: UInt64
    private let origin: Origin

    /// The entry of a presence bucket value; `shared` is the node's ``Origin`` when there is one (its
    /// node must be `presence.node`), used for a token kept as bits.
    init(_ presence: ClusterLink.Presence, shared: Origin? = nil) {
        let node = shared.flatMap { $0.node == presence.node && $0.text == nil ? $0 : nil } ?? Origin(node: presence.node)
        switch TokenHash(presence.token) {
        case .sha256(let first, let second, let third, let fourth):
            (self.first, self.second, self.third, self.fourth) = (first, second, third, fourth)
            origin = node
        case .text(let text):
            (first, second, third, fourth) = (0, 0, 0, 0)
            origin = Origin(node: presence.node, text: text)
        }
    }

    /// The node the user is logged in on (its `--node-id`).
    var node: String { origin.node }

    /// The SHA-256 of the session's resume token, as the node wrote it.
    var tokenHash: TokenHash { origin.text.map { .text($0) } ?? .sha256(first, second, third, fourth) }

    /// The token's hash as the text of the presence bucket value (``ClusterLink/hash(_:)``'s form),
    /// exactly as it came.
    var token: String { tokenHash.string }

    /// Whether the entry's ``Origin`` is `origin` (the node's shared one, or not).
    func shares(_ origin: Origin) -> Bool { self.origin === origin }

    /// Whether `presence` is this entry: the same node and the same token hash text.
    func matches(_ presence: ClusterLink.Presence) -> Bool {
        node == presence.node && tokenHash == TokenHash(presence.token)
    }

    /// The same node and the same token hash text.
    static func == (lhs: RemoteUser, rhs: RemoteUser) -> Bool {
        lhs.node == rhs.node && lhs.tokenHash == rhs.tokenHash
    }

    /// A token hash of a presence bucket value: 64 lowercase hexadecimal digits (what
    /// ``ClusterLink/hash(_:)`` writes) as their 256 bits inline, most significant first; any other
    /// text (another node's version, a hand-written value) kept as the `String` it was, so that
    /// ``string`` gives back exactly the text it was made from and equality is that of the text.
    enum TokenHash: Equatable, Sendable {
        case sha256(UInt64, UInt64, UInt64, UInt64)
        case text(String)

        /// `text`, in the smallest form that gives it back unchanged.
        init(_ text: String) {
            let utf8 = text.utf8
            guard utf8.count == 64 else {
                self = .text(text)
                return
            }
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            var word: UInt64 = 0
            for (index, byte) in utf8.enumerated() {
                let value: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
                default:
                    self = .text(text)
                    return
                }
                word = word << 4 | UInt64(value)
                switch index {
                case 15: words.0 = word
                case 31: words.1 = word
                case 47: words.2 = word
                case 63: words.3 = word
                default: break
                }
            }
            self = .sha256(words.0, words.1, words.2, words.3)
        }

        /// The text it was made from.
        var string: String {
            switch self {
            case .text(let text):
                return text
            case .sha256(let first, let second, let third, let fourth):
                let alphabet = Array("0123456789abcdef".utf8)
                var bytes: [UInt8] = []
                bytes.reserveCapacity(64)
                for word in [first, second, third, fourth] {
                    for digit in 0..<16 { bytes.append(alphabet[Int(word >> UInt64((15 - digit) * 4) & 0xF)]) }
                }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }
}
