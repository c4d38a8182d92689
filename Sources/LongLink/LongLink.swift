// LongLink: the connection lifecycle every app on GCDAsyncSocket writes by hand (MISSION M4, M5).
//
// - `LongLinkClient`: connects, sends a heartbeat while connected and notices when acknowledgements
//   stop, reconnects after drops it did not ask for (at once, after 2 s, after 4 s more, then "server
//   unavailable"), queues messages sent while offline, and reports the cause of every drop.
// - `LongLinkServer`: accepts many clients, keeps a session each, answers heartbeats, drops clients
//   silent for longer than the idle timeout, sends to one or to all.
// - Both speak any protocol described by a `LinkCodec` (framing, heartbeat, acknowledgement).
// - Reliable delivery (issue 11, `Delivery/`), for protocols described by a `ReliableLinkCodec`: a
//   client outbox of numbered messages persisted through a `DeliveryStateStore` and resent until the
//   server stores them, deliveries passed on once and in order and acknowledged cumulatively, and the
//   server's `DeliveryWindow` for streaming a backlog in bounded pages. Pure state machines (`Outbox`,
//   `ReceiveTracker`, `DeliveryWindow`) driven by the link.
