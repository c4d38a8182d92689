// IMChat: the instant-messaging showcase (MISSION M6) on LongLink: the chat protocol (`ChatMessage`,
// `ChatCodec`, the seven-byte header with JSON bodies, docs/PROTOCOL.md), the routing server
// (`ChatServer`) and the line-oriented client (`ChatClient`, `ChatCommand`) behind `im-server` and
// `im-client`, which only parse flags and print; and LAN discovery over UDP multicast (`DiscoveryQuery`,
// `DiscoveryAnswer`, `DiscoveryResponder` in the server, `DiscoveryClient`), so a client finds its server.
//
// Layering: IMChat sits above LongLink (the design sketch drew it below), because the link layer is
// protocol-agnostic through `LinkCodec` and the chat is one protocol on it.
