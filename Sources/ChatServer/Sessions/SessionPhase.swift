import ChatProtocol

/// Where one session is in its life, with what that stage needs (the ``Router``'s one record of it):
///
/// ```
///                 login                 turn comes,         password
///  awaitingLogin ──────▶ loginQueued ──▶ version 2 + ──────▶ checkingPassword ──┐
///       ▲  │                  │          password                 │  ▲ claimed │ verified /
///       │  │ v1 / no password │ v1 / no password                  │  └─────────┘ claimed
///       │  └──────────────────┴────────────────────────▶ loggedIn ◀──────────────┘
///       │  refused                                           │
///       └────────────────────────────────────────────────────┤ same user logs in elsewhere
///                                                            ▼
///   any phase ──(rate limit)──▶ closing(reason)          replaced(name)
/// ```
///
/// Messages a session sends while its login waits its turn or its password is checked are held in the
/// phase, at most ``Router/maxHeldMessages``, and handled in order once the login is decided.
///
/// The phases with bulky payloads (a login message, a login attempt, a closing reason) are `indirect`:
/// a session spends its life logged in, so its record holds one name inline (16 bytes) rather than room
/// for the largest payload (issue 35 §2: memory per chat user).
enum SessionPhase: Equatable {
    /// Connected, not logged in.
    case awaitingLogin
    /// Its login (`login`) waits its turn on the routing queue (``Router/loginsPerPass``), or for its
    /// user's record to be read from the store (Router+LoginReads); `held` came after it.
    indirect case loginQueued(login: ChatMessage, held: [ChatMessage])
    /// Its version 2 login's password is being hashed or checked off the routing queue, then its name
    /// claimed and its delivery window read from the store.
    indirect case checkingPassword(LoginAttempt, held: [ChatMessage])
    /// Logged in as `name` (``SessionTable/users`` has the user's state).
    case loggedIn(name: String)
    /// Its user logged in again over another connection (here or on another node): being closed, and
    /// its close is not the user's logout.
    case replaced(name: String)
    /// The router is closing it (a limit); `reason` is the close's log line, `name` who it was logged in
    /// as, if anyone. What it still sends is not answered.
    indirect case closing(reason: String, name: String?)

    /// The name it is logged in as (or was, while closing).
    var name: String? {
        switch self {
        case .loggedIn(let name): return name
        case .closing(_, let name): return name
        default: return nil
        }
    }

    /// What it sent while its login waits or is checked; nil in the other phases.
    var held: [ChatMessage]? {
        switch self {
        case .loginQueued(_, let held), .checkingPassword(_, let held): return held
        default: return nil
        }
    }
}

/// A version 2 login with a password, as it was sent, while its password is checked.
struct LoginAttempt: Sendable, Equatable {
    let name: String
    let password: String
    let token: String?
    let instance: String
    let positions: [String: UInt64]
    let presenceChanges: Bool
}
