// LongLink: the connection lifecycle every app on GCDAsyncSocket writes by hand (MISSION M4, M5).
//
// - `LongLinkClient`: connects, sends a heartbeat while connected and notices when acknowledgements
//   stop, reconnects after drops it did not ask for (at once, after 2 s, after 4 s more, then "server
//   unavailable"), queues messages sent while offline, and reports the cause of every drop.
// - `LongLinkServer`: accepts many clients, keeps a session each, answers heartbeats, drops clients
//   silent for longer than the idle timeout, sends to one or to all. Limits (issue 12): connections
//   at once, a deadline to be admitted (logged in) and one to finish a started frame; each refusal
//   (`LinkRefusal`) is told to the client with the codec's farewell before the close, and a graceful
//   `shutDown` tells every client the server is going away. Nothing is dropped unseen: a message that
//   cannot be encoded is reported (`Event.sendFailed`). `TokenBucket` is the rate limit's arithmetic.
// - Both speak any protocol described by a `LinkCodec` (framing, heartbeat, acknowledgement).
// - Reliable delivery (issue 11, `Delivery/`), for protocols described by a `ReliableLinkCodec`: a
//   client outbox of numbered messages persisted through a `DeliveryStateStore` and resent until the
//   server stores them, deliveries passed on once and in order and acknowledged cumulatively, and the
//   server's `DeliveryWindow` for streaming a backlog in bounded pages; a server that asks the client
//   to wait (`DeliveryRole.retry`, a rate limit) gets the outbox resent after the pause. Pure state machines (`Outbox`,
//   `ReceiveTracker`, `DeliveryWindow`) driven by the link.
