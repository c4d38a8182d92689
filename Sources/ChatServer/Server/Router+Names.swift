import ChatProtocol

/// The name rules at login and for recipients (``UserName``, docs/PROTOCOL.md "Names"): a login is
/// refused `invalidName` with the rule it breaks, or `nameTaken` when its name is too similar to a
/// user's (in the store, or online); a direct message to a name too similar to a user's reaches that
/// user, under the registered spelling.
extension Router {
    /// The detail of the `invalidName` answer to a login as `name` (``UserName/Refusal``), or nil when
    /// `name` follows the rules.
    static func invalidNameDetail(_ name: String) -> String? {
        do {
            try UserName.validate(name)
            return nil
        } catch {
            return error.description
        }
    }

    /// The detail of the `nameTaken` answer to a login as `name` when the user the store found for it,
    /// `record`, is another spelling (`ANN is too similar to the existing user ann`); nil when there is
    /// no such user or it is `name` itself. Only the registered spelling logs in, whatever its case.
    static func similarNameDetail(_ name: String, _ record: UserRecord?) -> String? {
        guard let record, record.name != name else { return nil }
        return "\(name) is too similar to the existing user \(record.name)"
    }

    /// The detail of the `nameTaken` answer to a login as `name` while `other`, a similar name, is online.
    static func similarOnlineDetail(_ name: String, _ other: String) -> String {
        "\(name) is too similar to \(other), who is logged in"
    }

    /// Whether `text` could be a user's name as far as looking it up goes: at most ``UserName/maxBytes``
    /// bytes and well formed (``UserName/isWellFormed(_:)``); anything else is no user's, without a
    /// look in the store.
    static func couldBeAUser(_ text: String) -> Bool {
        text.utf8.count <= UserName.maxBytes && UserName.isWellFormed(text)
    }

    /// The registered spelling of the user a direct message to `recipient` goes to: `recipient` itself
    /// when it is a user's name (or no user's: the message is then refused `unknownRecipient`), else
    /// the name of the user it is too similar to (`ANN` → `ann`), so the conversation id always holds
    /// registered names. A store error leaves `recipient` as it is (the delivery's own lookup answers it).
    func registeredName(of recipient: String) -> String {
        guard !delivery.knownUsers.contains(recipient), Router.couldBeAUser(recipient),
            let record = try? store.user(named: recipient)
        else { return recipient }
        return record.name
    }
}
