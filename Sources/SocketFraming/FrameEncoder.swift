import Foundation

/// Turns a message into the bytes that travel: the encoding half of a codec.
public protocol FrameEncoder {
    /// What one encoded message is.
    associatedtype Message

    /// Appends the wire bytes of `message` to `out`.
    ///
    /// - Throws: `FramingError` (typically `.messageTooLong`) when `message` cannot be encoded; `out` is then
    ///   left as it was.
    func encode(_ message: Message, into out: inout Data) throws(FramingError)
}

extension FrameEncoder {
    /// Returns the wire bytes of `message`.
    ///
    /// - Throws: what `encode(_:into:)` throws.
    public func encode(_ message: Message) throws(FramingError) -> Data {
        var out = Data()
        try encode(message, into: &out)
        return out
    }
}
