/// A user online on another node, as ``ClusterLink/remote`` keeps it (internal; routing queue): the
/// node's id and the resume token's hash of its presence bucket value (``ClusterLink/Presence``),
/// without a heap block of its own.
///
/// A node holds one for every user of every other node (at 100,000 users on 7 nodes, ~85,700 of them):
/// the hash as 64 characters of text cost a heap block of 112 bytes each; here its 32 bytes are inline,
/// and the node's id is the one `String` instance of ``ClusterLink``'s node set (a short id, 15 bytes or
/// fewer, is inline in any `String`; a longer one is then shared, not copied per user).
struct RemoteUser: Equatable {
    /// The node the user is logged in on (its `--node-id`).
    var node: String
    /// The SHA-256 of the session's resume token, as the node wrote it.
    var tokenHash: TokenHash

    /// The entry of a presence bucket value.
    init(_ presence: ClusterLink.Presence) {
        node = presence.node
        tokenHash = TokenHash(presence.token)
    }

    /// The token's hash as the text of the presence bucket value (``ClusterLink/hash(_:)``'s form),
    /// exactly as it came.
    var token: String { tokenHash.string }

    /// Whether `presence` is this entry: the same node and the same token hash text.
    func matches(_ presence: ClusterLink.Presence) -> Bool {
        node == presence.node && tokenHash == TokenHash(presence.token)
    }

    /// A token hash of a presence bucket value: 64 lowercase hexadecimal digits (what
    /// ``ClusterLink/hash(_:)`` writes) as their 256 bits inline, most significant first; any other
    /// text (another node's version, a hand-written value) kept as the `String` it was, so that
    /// ``string`` gives back exactly the text it was made from and equality is that of the text.
    enum TokenHash: Equatable {
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
