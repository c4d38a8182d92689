// LongLink: the connection lifecycle every app on GCDAsyncSocket writes by hand (MISSION M4, M5).
//
// - `LongLinkClient`: connects, sends a heartbeat while connected and notices when acknowledgements
//   stop, reconnects after drops it did not ask for (at once, after 2 s, after 4 s more, then "server
//   unavailable"), queues messages sent while offline, and reports the cause of every drop.
// - `LongLinkServer`: accepts many clients, keeps a session each, answers heartbeats, drops clients
//   silent for longer than the idle timeout, sends to one or to all.
// - Both speak any protocol described by a `LinkCodec` (framing, heartbeat, acknowledgement).
