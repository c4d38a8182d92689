// The messages the server has not yet stored, in memory (their durable copy is the store's outbox),
// as im-client's Outbox (Sources/LongLink/Delivery/Outbox.swift): sent in id order, at most `window`
// written on a connection and unanswered; a connection that ends puts them all back to be resent from
// the oldest; after a pause asked for by the server (a rate limit), one at a time until it is empty.

/** At most this many numbered messages written and not yet answered (PROTOCOL.md "Sending" 5). */
export const WINDOW = 256;
/** The most messages the outbox holds, sent or waiting (im-client's Outbox limit, issue 11's bound). */
export const LIMIT = 10000;

export class Outbox {
  /** `entries`: `{id, kind, to, text, conversation, created}`, any order. */
  constructor(entries) {
    this.entries = [...entries].sort((a, b) => a.id - b.id);
    this.inFlight = 0;
    this.window = WINDOW;
  }

  get isFull() {
    return this.entries.length >= LIMIT;
  }

  get length() {
    return this.entries.length;
  }

  append(entry) {
    this.entries.push(entry);
  }

  /** The oldest message not yet written on this connection, now counted in flight; undefined when none may go. */
  nextToSend() {
    if (this.inFlight >= this.window || this.inFlight >= this.entries.length) return undefined;
    this.inFlight += 1;
    return this.entries[this.inFlight - 1];
  }

  /** Removes message `id` (stored or refused for good) and returns it; undefined when not held. */
  acknowledge(id) {
    const index = this.entries.findIndex((entry) => entry.id === id);
    if (index < 0) return undefined;
    const [entry] = this.entries.splice(index, 1);
    if (index < this.inFlight) this.inFlight -= 1;
    if (this.entries.length === 0) this.window = WINDOW;
    return entry;
  }

  /** The connection ended, or a pause is over: every message held is resent, oldest first. */
  rewind() {
    this.inFlight = 0;
  }

  /** The server asked for a pause: one message in flight at a time until the outbox is empty. */
  slowDown() {
    this.window = 1;
  }
}
