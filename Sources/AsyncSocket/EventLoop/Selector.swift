/// What a registered descriptor wants to hear about.
struct SelectorInterest: OptionSet, Equatable {
    let rawValue: UInt8
    /// Readable, or end of file, or an error.
    static let read = SelectorInterest(rawValue: 1)
    /// Writable, or a connect finished, or an error.
    static let write = SelectorInterest(rawValue: 2)
}

/// One readiness event from the selector.
struct SelectorEvent {
    /// The token given at registration (descriptor and generation).
    var token: UInt64
    /// Data, end of file, an error or a hang-up is waiting: a read will not block.
    var readable: Bool
    /// Buffer space, a finished connect, an error or a hang-up: a write will not block.
    var writable: Bool
}

/// Something the event loop calls when its descriptor is ready. Called on the loop thread only.
protocol Selectable: AnyObject {
    /// The descriptor is readable (data, end of file, error).
    func selectorReadable()
    /// The descriptor is writable (space, connect done, error).
    func selectorWritable()
}
