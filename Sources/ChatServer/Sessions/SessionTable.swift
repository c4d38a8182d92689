import ChatProtocol
import LongLink

/// The one owner of per-session state on the routing queue: each open session's record (its
/// ``SessionPhase`` and message rate), and the logged-in users by name. Not thread-safe: the
/// ``Router`` keeps it and uses it on its routing queue only.
struct SessionTable {
    /// One open session.
    struct Record {
        let peer: any ChatPeer
        var phase: SessionPhase = .awaitingLogin
        var pace: Router.Pace
    }

    /// A logged-in user: its session and what its login said. Its fields are ordered so that they pack
    /// into 80 bytes (issue 35 §2: one per logged-in user, in a dictionary at most ¾ full).
    struct User {
        let session: any ChatPeer
        /// The resume token (kept compact: ``CompactToken``).
        private let token: CompactToken
        let version: ChatProtocolVersion
        /// Version 2 login with `presenceChanges`: one `presenceChanges` per presence tick instead of
        /// single `presence` messages (Router+Presence).
        var presenceChanges = false
        /// The client instance (kept compact: ``CompactToken``).
        private let instance: CompactToken
        /// ``window``, boxed: live-only sessions (most) have none, and a stored one's is 41 bytes.
        private var windowBox: WindowBox?
        /// The presence event its login reply reflects (``PresenceBoard/event``): changes up to it are
        /// not announced to it again.
        var presenceSeen: UInt64 = 0

        init(
            session: any ChatPeer, resumeToken: String, version: ChatProtocolVersion, clientInstance: String,
            window: DeliveryWindow?, presenceChanges: Bool = false, presenceSeen: UInt64 = 0
        ) {
            self.session = session
            self.token = CompactToken(resumeToken)
            self.version = version
            self.instance = CompactToken(clientInstance)
            self.windowBox = window.map { WindowBox($0) }
            self.presenceChanges = presenceChanges
            self.presenceSeen = presenceSeen
        }

        /// The resume token its login was answered with.
        var resumeToken: String { token.string }
        /// The client instance of a version 2 login (the de-duplication key with the message ids).
        var clientInstance: String { instance.string }
        /// Whether `text` is its resume token.
        func hasResumeToken(_ text: String) -> Bool { token.matches(text) }

        /// Delivery state of a stored session (version 2 with a password); nil for live-only sessions.
        /// A value, as if stored inline: a change made through one copy of the user is not seen by
        /// another (the box is copied first when shared), and a change in place is made in place.
        var window: DeliveryWindow? {
            get { windowBox?.window }
            _modify {
                if windowBox != nil, !isKnownUniquelyReferenced(&windowBox) { windowBox = WindowBox(windowBox?.window) }
                // Moved out of the box while it is changed, so that its storage has one owner.
                var value = windowBox?.window
                windowBox?.window = nil
                defer { store(value) }
                yield &value
            }
            set { store(newValue) }
        }

        private mutating func store(_ window: DeliveryWindow?) {
            guard let window else {
                windowBox = nil
                return
            }
            if windowBox != nil, isKnownUniquelyReferenced(&windowBox) {
                windowBox?.window = window
            } else {
                windowBox = WindowBox(window)
            }
        }
    }

    /// A stored session's ``DeliveryWindow``, out of line (``User/window``).
    final class WindowBox {
        var window: DeliveryWindow?

        init(_ window: DeliveryWindow?) { self.window = window }
    }

    /// Open sessions by ``ChatPeer/id``.
    private(set) var records: [Int: Record] = [:]
    /// Logged-in users by name (each one's session is in ``records`` in phase `loggedIn`).
    var users: [String: User] = [:]
    /// The names of ``users`` by key, to refuse a login too similar to a name online (Router+Names).
    private(set) var onlineNames = NameIndex()

    /// A session opened, not logged in, with a full bucket.
    mutating func open(_ peer: any ChatPeer, pace: Router.Pace) {
        records[peer.id] = Record(peer: peer, pace: pace)
    }

    /// Forgets a closed session's record and returns it (nil when unknown).
    mutating func remove(_ peer: any ChatPeer) -> Record? {
        records.removeValue(forKey: peer.id)
    }

    /// The phase of `peer`'s session (`awaitingLogin` when the table does not know it).
    func phase(of peer: any ChatPeer) -> SessionPhase {
        records[peer.id]?.phase ?? .awaitingLogin
    }

    /// Moves `peer`'s session to `phase` (nothing when it is closed already).
    mutating func set(_ phase: SessionPhase, of peer: any ChatPeer) {
        records[peer.id]?.phase = phase
    }

    /// The name `peer` is logged in as (or was, if it is being closed).
    func name(of peer: any ChatPeer) -> String? { records[peer.id]?.phase.name }

    /// `peer`'s message rate.
    func pace(of peer: any ChatPeer) -> Router.Pace? { records[peer.id]?.pace }

    mutating func setPace(_ pace: Router.Pace, of peer: any ChatPeer) {
        records[peer.id]?.pace = pace
    }

    /// Whether `peer`'s messages are being held (its login waits or is checked).
    func isHolding(_ peer: any ChatPeer) -> Bool { records[peer.id]?.phase.held != nil }

    /// Adds `message` to what `peer` sent while its login waits or is checked; false when it has
    /// ``Router/maxHeldMessages`` already (or is not holding).
    mutating func hold(_ message: ChatMessage, from peer: any ChatPeer) -> Bool {
        // The phase is cleared before the append, so that the array has one owner and grows in place.
        switch records[peer.id]?.phase {
        case .loginQueued(let login, var held)? where held.count < Router.maxHeldMessages:
            records[peer.id]?.phase = .awaitingLogin
            held.append(message)
            records[peer.id]?.phase = .loginQueued(login: login, held: held)
        case .checkingPassword(let attempt, var held)? where held.count < Router.maxHeldMessages:
            records[peer.id]?.phase = .awaitingLogin
            held.append(message)
            records[peer.id]?.phase = .checkingPassword(attempt, held: held)
        default:
            return false
        }
        return true
    }

    /// `name` logs in over `peer`: the user's record, and the session's phase `loggedIn`.
    mutating func logIn(_ name: String, key: UserName.Key, user: User) {
        users[name] = user
        onlineNames.insert(name, key: key)
        records[user.session.id]?.phase = .loggedIn(name: name)
    }

    /// `name` is no longer online here (logged out, dropped, or replaced); returns its user.
    @discardableResult
    mutating func logOut(_ name: String) -> User? {
        guard let user = users.removeValue(forKey: name) else { return nil }
        onlineNames.remove(name, key: UserName.Key(name))
        return user
    }
}
