// im-client's reconnect schedule (docs/PROTOCOL.md "Reconnect"; LongLink's ReconnectSchedule with
// ReconnectPolicy.keepTrying(cap: 60 s)): attempts after 0, 2 and 4 s, then doubling, at most 60 s
// (8, 16, 32, 60, 60, … s), each stretched by a jitter uniformly random in [0, 1 s). When the third
// attempt fails the server is reported unavailable, and the attempts go on. The schedule starts over
// only once a connection has stayed up for one heartbeat interval.

export const ARTICLE_DELAYS_MS = [0, 2000, 4000];
export const CAP_MS = 60000;
export const JITTER_MS = 1000;

export class ReconnectSchedule {
  /** `random` returns a number in [0, 1), as Math.random does. */
  constructor(random = Math.random) {
    this.random = random;
    this.attempts = 0;
  }

  /** The base delay of attempt `attempt` (1, 2, …) in ms, without jitter. */
  static baseDelay(attempt) {
    if (attempt <= ARTICLE_DELAYS_MS.length) return ARTICLE_DELAYS_MS[attempt - 1];
    let delay = Math.max(ARTICLE_DELAYS_MS[ARTICLE_DELAYS_MS.length - 1], 1000);
    for (let i = ARTICLE_DELAYS_MS.length; i < attempt; i += 1) {
      delay *= 2;
      if (delay >= CAP_MS) return CAP_MS;
    }
    return delay;
  }

  /** The next attempt: `{attempt, delayMs}` with jitter. */
  next() {
    this.attempts += 1;
    const drawn = Math.min(Math.max(Number(this.random()) || 0, 0), 1);
    const jitter = Math.min(Math.floor(JITTER_MS * drawn), JITTER_MS - 1);
    return { attempt: this.attempts, delayMs: ReconnectSchedule.baseDelay(this.attempts) + jitter };
  }

  /** True once the attempts of the article's schedule are used up: the server is unavailable. */
  get isUnavailable() {
    return this.attempts >= ARTICLE_DELAYS_MS.length;
  }

  reset() {
    this.attempts = 0;
  }
}
