// IMChat: the instant-messaging showcase (MISSION M6) on LongLink: the chat protocol (`ChatMessage`,
// `ChatMessageV2`, `ChatCodec`: the seven-byte header with JSON bodies, versions 1 and 2,
// docs/PROTOCOL.md; version 2 is a `ReliableLinkCodec`), the routing server
// (`ChatServer`) and the line-oriented client (`ChatClient`, `ChatCommand`) behind `im-server` and
// `im-client`, which only parse flags and print; and LAN discovery over UDP multicast (`DiscoveryQuery`,
// `DiscoveryAnswer`, `DiscoveryResponder` in the server, `DiscoveryClient`), so a client finds its server.
// `Store/` keeps what must outlive a process (issue 11): the server's `MessageStore` (conversations as
// numbered append-only logs, users, positions; in memory or in SQLite through the `CSQLite` system
// library), the client's `SQLiteDeliveryStateStore` (outbox, positions, client instance), Argon2id
// password hashes through `CSodium` (`PasswordHasher`) and failed-login throttling (`LoginThrottle`).
//
// Layering: IMChat sits above LongLink (the design sketch drew it below), because the link layer is
// protocol-agnostic through `LinkCodec` and the chat is one protocol on it.
