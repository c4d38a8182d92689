// The status bar (docs/PROTOCOL.md "Reconnect"): connecting, online (and whether live only),
// reconnecting in N s, server unavailable; how many messages wait in the outbox. Its element carries
// the state and the count as data-state and data-waiting too.

/** The status bar: connecting / online / reconnecting in N s / server unavailable; outbox size. */
export class StatusBar {
  constructor() {
    this.state = 'offline';
    this.at = 0;
    this.waiting = 0;
    this.ticker = null;
  }

  set(state, at = 0) {
    this.state = state;
    this.at = at;
    clearInterval(this.ticker);
    this.ticker = at > Date.now() ? setInterval(() => this.render(), 250) : null;
    this.render();
  }

  /** A session without a password: nothing is kept for it while it is away (no history, no receipts). */
  setLiveOnly(liveOnly) {
    this.liveOnly = liveOnly;
    this.render();
  }

  setWaiting(count) {
    this.waiting = count;
    this.render();
  }

  render() {
    const status = document.getElementById('status');
    const seconds = Math.max(0, Math.ceil((this.at - Date.now()) / 1000));
    if (this.at && seconds === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
    const texts = {
      offline: 'not connected',
      connecting: 'connecting…',
      online: this.liveOnly ? 'online, live only (no password: nothing is kept for you while you are away)' : 'online',
      reconnecting: `reconnecting in ${seconds} s`,
      unavailable: this.at ? `server unavailable; trying again in ${seconds} s` : 'server unavailable; trying…',
    };
    let text = texts[this.state] ?? this.state;
    if (this.waiting > 0) text += ` · ${this.waiting} waiting to be stored`;
    status.textContent = text;
    status.dataset.state = this.state;
    status.dataset.waiting = String(this.waiting);
  }
}
