import Foundation

/// Something that says when the device's network may have changed: routes, addresses, an app's
/// reachability callback. A ``LongLinkClient`` with a ``SmartHeartbeat`` starts it on its first
/// ``LongLinkClient/connect()`` and then re-derives ``SmartHeartbeat/networkIdentifier`` at each report:
/// a report need not mean that the network changed (one routing change often brings several).
public protocol NetworkChangeSource: AnyObject, Sendable {
    /// Starts reporting to `onChange`, called on any thread after each change (or burst of changes).
    /// Each call adds a handler: links whose configurations share one source all hear of changes.
    /// - Throws: when the source cannot watch (a ``RouteChangeMonitor`` whose netlink socket cannot be
    ///   opened throws `SocketError`); the link then only hears of changes the app reports.
    func start(onChange: @escaping @Sendable () -> Void) throws
    /// Stops reporting to every handler; none is called after this returns.
    func stop()
}
