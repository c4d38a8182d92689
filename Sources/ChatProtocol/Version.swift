/// The version of the chat programs (`im-server`, `im-client`) and of this package's chat layer, as
/// `--version` prints it (`im-server 0.12.0`): MAJOR.MINOR.PATCH, the minor number following the
/// issue the release closed (0.12: issue 12). Not the wire protocol's version
/// (``ChatProtocolVersion``), which changes only when the frames do.
public let chatVersion = "0.12.0"

/// The TCP port `im-server` listens on and `im-client` connects to unless told otherwise: 7777 (also
/// the UDP port of LAN discovery, ``DiscoveryProtocol``).
public let defaultChatPort: UInt16 = 7777
