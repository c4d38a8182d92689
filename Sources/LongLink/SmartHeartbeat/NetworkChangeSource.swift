import Foundation

/// Something that says when the device's network may have changed: routes, addresses, an app's
/// reachability callback. A ``LongLinkClient`` with a ``SmartHeartbeat`` starts it on its first
/// ``LongLinkClient/connect()`` and then re-derives ``SmartHeartbeat/networkIdentifier`` at each report:
/// a report need not mean that the network changed (one routing change often brings several).
public protocol NetworkChangeSource: AnyObject, Sendable {
    /// Starts reporting: `onChange` is called, on any thread, after each change (or burst of changes).
    /// Starting a source that is already started replaces the handler.
    /// - Throws: when the source cannot watch (a ``RouteChangeMonitor`` whose netlink socket cannot be
    ///   opened throws `SocketError`); the link then only hears of changes the app reports.
    func start(onChange: @escaping @Sendable () -> Void) throws
    /// Stops reporting; `onChange` is not called after this returns.
    func stop()
}
