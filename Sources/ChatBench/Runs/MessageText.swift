/// The text of a bench message: its client id in decimal, a space, and `x`s up to the run's text
/// size, so that whoever receives a delivery (which carries no client id, only the conversation's
/// sequence number) knows which message it is: `"17 xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"` (32 bytes).
enum MessageText {
    /// The text of message `id`, `bytes` long (longer when the id and its space need more).
    static func make(id: UInt64, bytes: Int) -> String {
        let prefix = "\(id) "
        return prefix + String(repeating: "x", count: max(0, bytes - prefix.utf8.count))
    }

    /// The id at the start of `text`; nil when the text is not one this tool made (network data: never
    /// trusted).
    static func id(in text: String) -> UInt64? {
        guard let space = text.utf8.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        return UInt64(Substring(text.utf8[..<space]))
    }
}
