import Foundation

/// The adaptive heartbeat of a ``LongLinkClient`` (``LongLinkClient/Configuration/smartHeartbeat``):
/// it finds, per network, the longest idle time the network's NAT keeps a connection for, and beats
/// just under it, as WeChat's Mars does (`mars/stn/src/smart_heartbeat.cc`; its figures are in
/// `mars/stn/config.h`, and they are the defaults here).
///
/// A heartbeat goes out after the link has been idle (nothing written or read) for the current
/// interval; each one is a probe of that interval. It starts at ``minimum`` and, after
/// ``successesBeforeStep`` answered heartbeats at one interval, tries ``step`` longer, up to
/// ``maximum``. A heartbeat left unanswered for ``acknowledgementTimeout`` makes the link reconnect as
/// always and counts as a failure at that interval (so does a drop by the server or the network while
/// a heartbeat is unanswered, or after more than ``minimum`` idle: a NAT or a server idle timeout that
/// closed the connection rather than black-holing it). After ``failuresBeforeBackOff`` failures the
/// interval settles ``margin`` below the last interval that worked (the failed one minus ``step``); an
/// answered heartbeat at ``maximum`` settles at ``maximum`` minus ``margin``. A settled interval that
/// fails ``failuresBeforeBackOff`` times starts the probing over from ``minimum`` (the network's NAT
/// changed). At ``minimum`` failures teach nothing: the link goes on reconnecting as a fixed
/// heartbeat would. The interval learned so far survives reconnects and, through the ``store``,
/// restarts.
///
/// With Mars's defaults and a NAT that forgets after 5 minutes: 210 s ×5, 270 s ×5, 330 s fails twice,
/// settled at 250 s. The server's idle timeout (`LongLinkServer.Configuration.idleTimeout`, 360 s by
/// default) must be longer than ``maximum`` plus ``acknowledgementTimeout`` or it is the server that
/// the probing finds (which works, but each probe over it costs a reconnect).
///
/// Networks are told apart by ``networkIdentifier``; each has its own learned interval. When the
/// network changes (``networkChanges`` reports a routing change and the identifier differs, or the app
/// calls ``LongLinkClient/networkDidChange()``), the link drops its connection with
/// ``LongLinkClient/DisconnectReason/networkChanged`` and reconnects at once (Mars reconnects
/// immediately on a network change) rather than waiting for a heartbeat to fail.
public struct SmartHeartbeat: Sendable {
    /// The shortest interval and the one probing starts from. Default 210 s (3.5 min, Mars's
    /// `MinHeartInterval`), a little over the articles' fixed 3 minutes.
    public var minimum: Duration = .seconds(210)
    /// The longest interval tried. Default 600 s (10 min, Mars's `MaxHeartInterval`).
    public var maximum: Duration = .seconds(600)
    /// How much longer each probe tries after the interval before it worked. Default 60 s (Mars's `HeartStep`).
    public var step: Duration = .seconds(60)
    /// How far below the longest interval that worked the interval settles. Default 20 s (Mars's `SuccessStep`).
    public var margin: Duration = .seconds(20)
    /// Answered heartbeats at one interval before trying a longer one. Default 5 (Mars's `BaseSuccCount`).
    public var successesBeforeStep = 5
    /// Failed heartbeats at one interval before backing off (while probing) or starting over (once
    /// settled). Default 2 (Mars's `MaxHeartFailCount`).
    public var failuresBeforeBackOff = 2
    /// How long a heartbeat may go unanswered (nothing at all received) before the link counts as
    /// dead, unless ``LongLinkClient/Configuration/heartbeatAckTimeout`` is set. Default 30 s: long
    /// enough for a mobile radio to wake up and a busy server to answer, short against the minutes
    /// between heartbeats (our figure; Mars does not publish one for this).
    public var acknowledgementTimeout: Duration = .seconds(30)
    /// Where learned intervals are kept between runs, by network identifier. Default: a JSON file,
    /// ``FileHeartbeatIntervalStore/defaultLocation``.
    public var store: any HeartbeatIntervalStore = FileHeartbeatIntervalStore(url: FileHeartbeatIntervalStore.defaultLocation)
    /// The identifier of the network the device is on now, or `nil` when unknown (then the link beats
    /// at ``minimum`` and learns nothing). Called on the link's event loop at each connect and after
    /// each reported change; it must be quick. Default ``DefaultRoute/networkIdentifier()``: the
    /// default route's interface and gateway ("eth0 via 192.0.2.1") on Linux, `nil` elsewhere.
    public var networkIdentifier: @Sendable () -> String? = { DefaultRoute.networkIdentifier() }
    /// What reports that the routes may have changed. Default: a ``RouteChangeMonitor`` (netlink) on
    /// Linux, `nil` elsewhere (the app then calls ``LongLinkClient/networkDidChange()`` from its
    /// reachability API). The link starts it on its first ``LongLinkClient/connect()``.
    public var networkChanges: (any NetworkChangeSource)? = RouteChangeMonitor.makeDefault()

    /// Mars's figures, a file store and, on Linux, the default route and netlink.
    public init() {}

    /// Why the interval changed (``LongLinkClient/Event/heartbeatIntervalChanged(from:to:reason:)``).
    public enum ChangeReason: Sendable, Equatable, CustomStringConvertible {
        /// ``successesBeforeStep`` heartbeats in a row were answered: one ``step`` longer.
        case steppedUp
        /// A heartbeat at ``maximum`` was answered: settled at ``maximum`` minus ``margin``.
        case reachedMaximum
        /// ``failuresBeforeBackOff`` heartbeats failed while probing: settled ``margin`` below the
        /// interval before.
        case backedOff
        /// The settled interval failed ``failuresBeforeBackOff`` times: probing again from ``minimum``.
        case restarted
        /// The link is on a network it had not used yet in this run, or on another one than before:
        /// that network's learned interval (from the ``store``; ``minimum`` for a network it never saw).
        case loadedForNetwork

        public var description: String {
            switch self {
            case .steppedUp: return "stepped up"
            case .reachedMaximum: return "settled at the maximum"
            case .backedOff: return "backed off"
            case .restarted: return "probing again"
            case .loadedForNetwork: return "learned for this network"
            }
        }
    }
}
