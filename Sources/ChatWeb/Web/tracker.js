// The receive side of reliable delivery, as im-client's ReceiveTracker
// (Sources/LongLink/Delivery/ReceiveTracker.swift; PROTOCOL.md "Receiving"): per conversation the
// highest seq shown (its position); a delivery at or below it is a duplicate, the next one is shown, a
// later one is a gap, except for a conversation's first delivery on a connection (the server sends from
// the position on; what it skips it no longer has).

export class ReceiveTracker {
  /** `positions`: a Map conversation → seq, as saved. */
  constructor(positions) {
    this.positions = positions;
    this.seen = new Set();
  }

  /** 'deliver', 'duplicate' or 'gap' for a delivery numbered `seq` in `conversation`; moves nothing. */
  verdict(conversation, seq) {
    const position = this.positions.get(conversation) ?? 0;
    if (seq <= position) return 'duplicate';
    const first = !this.seen.has(conversation);
    this.seen.add(conversation);
    if (position > 0 && seq !== position + 1 && !first) return 'gap';
    return 'deliver';
  }

  /** The delivery was saved: the position moves to `seq`. */
  moved(conversation, seq) {
    this.positions.set(conversation, seq);
  }

  /** The connection ended: the next one's first deliveries may skip again. */
  connectionEnded() {
    this.seen.clear();
  }
}
