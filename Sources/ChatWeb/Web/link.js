// The chat's connection over WebSocket with version 2's reliable delivery, as im-client's
// LongLinkClient and ChatClient do it (docs/PROTOCOL.md "Version 2", "WebSocket"): the login first on
// every connection with the positions, then the outbox resent in id order with the original ids, at
// most 256 unanswered; `stored` removes a message from the outbox; deliveries shown once, in order,
// positions saved before they are shown and acknowledged with one cumulative `received` per
// conversation; heartbeats; reconnects on im-client's schedule.

import { Code, ProtocolError, ROOM, decodeFrame, directConversation, encodeFrame } from './frame.js';
import { Outbox } from './outbox.js';
import { ReconnectSchedule } from './schedule.js';
import { ReceiveTracker } from './tracker.js';
/** The first answer of a connection may take this long (a password hash): im-client's connect timeout. */
export const CONNECT_TIMEOUT_MS = 20000;
/** A login reports at most this many positions. */
export const MAX_POSITIONS = 1000;
/** A text may take at most this many bytes written as a JSON string ("Limits and refusals"). */
export const MAX_TEXT_BYTES = 65000;
/** Errors with an id that refuse the message for good. */
const REFUSED_FOR_GOOD = new Set(['unknownRecipient', 'badRequest', 'messageTooLong']);
/** Login refusals a person must answer: no reconnect on its own. */
const LOGIN_REFUSALS = new Set(['nameTaken', 'invalidName', 'badPassword', 'throttled', 'alreadyLoggedIn']);

/** The bytes of `text` written as a JSON string, quotes not counted. */
export function jsonTextBytes(text) {
  return new TextEncoder().encode(JSON.stringify(text)).byteLength - 2;
}

export class ChatLink {
  /**
   * @param options.url the chat's WebSocket address (ws://HOST:PORT/chat)
   * @param options.name, options.password (undefined: live only)
   * @param options.store an open ChatStore; options.state its load()
   * @param options.heartbeatMs the heartbeat interval (180 s by default)
   * @param options.onEvent receives `{type, …}` events, in order
   */
  constructor({ url, name, password, store, state, heartbeatMs = 180000, resumeToken, onEvent, random = Math.random }) {
    Object.assign(this, { url, name, password, store, heartbeatMs, resumeToken, onEvent, random });
    this.outbox = new Outbox(state.outbox);
    this.tracker = new ReceiveTracker(state.positions);
    this.receipts = state.receipts;
    this.schedule = new ReconnectSchedule(random);
    this.socket = null;
    this.stopped = true;
    this.loggedIn = false;
    this.stored = false;
    this.owed = new Set();
    this.timers = new Map();
    this.pausedUntil = 0;
    this.notBefore = 0;
    this.unavailable = false;
  }

  start() {
    this.stopped = false;
    this.#connect();
  }

  /** Ends the connection and every timer; nothing more is sent. */
  stop() {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.close(1000);
  }

  #timer(name, delayMs, action) {
    clearTimeout(this.timers.get(name));
    this.timers.set(name, setTimeout(() => {
      this.timers.delete(name);
      action();
    }, delayMs));
  }

  #cancel(name) {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
  }

  #status(state, detail = {}) {
    this.onEvent({ type: 'status', state, ...detail });
  }

  // MARK: Connecting

  #connect() {
    if (this.stopped) return;
    this.#status(this.unavailable ? 'unavailable' : 'connecting', { attempt: this.schedule.attempts });
    let socket;
    try {
      socket = new WebSocket(this.url);
    } catch (error) {
      this.onEvent({ type: 'notice', text: `cannot connect: ${error.message}` });
      this.#connectionEnded(null);
      return;
    }
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.loggedIn = false;
    this.heard = false;
    this.writes = Promise.resolve();
    this.reads = Promise.resolve();
    this.#timer('connect', CONNECT_TIMEOUT_MS, () => this.#drop(socket, 'no answer to the login'));
    socket.onopen = () => this.#opened(socket);
    socket.onmessage = (event) => {
      this.reads = this.reads.then(() => this.#received(socket, event.data)).catch((error) => {
        this.onEvent({ type: 'notice', text: `protocol error: ${error.message}` });
        this.#drop(socket, error.message);
      });
    };
    // The close is read after every message that came before it: a server's last words (its going-away
    // notice) are decoded asynchronously, and a close handled at once made them a stale connection's.
    socket.onclose = () => {
      this.reads = this.reads.then(() => this.#connectionEnded(socket));
    };
    socket.onerror = () => {}; // a close event follows
  }

  #opened(socket) {
    if (socket !== this.socket) return;
    this.openedAt = Date.now();
    this.lastHeard = this.openedAt;
    const login = { client: this.store.client, name: this.name, positions: this.#reportedPositions(), presenceChanges: true };
    if (this.password) login.password = this.password;
    if (this.resumeToken) login.resumeToken = this.resumeToken;
    this.#write(Code.login, login);
    this.#pump();
    this.heartbeatSentAt = null;
    this.#timer('heartbeat', this.heartbeatMs, () => this.#beat(socket));
    this.#timer('healthy', this.heartbeatMs, () => {
      this.schedule.reset();
      this.unavailable = false;
    });
  }

  /**
   * The positions a login reports: at most 1,000 (PROTOCOL.md "Bounds"); beyond that the highest, as
   * im-client does (a conversation left out is sent from what this user acknowledged from any client).
   */
  #reportedPositions() {
    const entries = [...this.tracker.positions].filter(([, seq]) => seq > 0);
    entries.sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.slice(0, MAX_POSITIONS));
  }

  /** Every interval a heartbeat; the link is dead when nothing at all arrived since the last one. */
  #beat(socket) {
    if (socket !== this.socket) return;
    const now = Date.now();
    if (this.heartbeatSentAt !== null && this.lastHeard < this.heartbeatSentAt) {
      if (this.heard || now - this.openedAt >= CONNECT_TIMEOUT_MS) return this.#drop(socket, 'heartbeat unanswered');
      return this.#timer('heartbeat', CONNECT_TIMEOUT_MS - (now - this.openedAt), () => this.#beat(socket));
    }
    this.heartbeatSentAt = now;
    this.#write(Code.heartbeat, {});
    this.#timer('heartbeat', this.heartbeatMs, () => this.#beat(socket));
  }

  /** Closes `socket` (this side's decision: a gap, a dead link); the reconnect follows its close. */
  #drop(socket, reason) {
    if (socket !== this.socket) return;
    this.onEvent({ type: 'notice', text: `disconnected (${reason})` });
    socket.close(4000);
    this.#connectionEnded(socket);
  }

  #connectionEnded(socket) {
    if (socket !== this.socket) return;
    this.socket = null;
    this.loggedIn = false;
    this.outbox.rewind(); // everything unanswered is resent on the next connection
    this.tracker.connectionEnded();
    for (const name of ['connect', 'heartbeat', 'healthy', 'retry']) this.#cancel(name);
    this.pausedUntil = 0;
    if (this.stopped) return;
    this.#scheduleReconnect();
  }

  /** The next attempt on the schedule; once the third has failed, the server is reported unavailable. */
  #scheduleReconnect() {
    this.unavailable = this.schedule.isUnavailable;
    const { attempt, delayMs: scheduled } = this.schedule.next();
    const delayMs = Math.max(scheduled, this.notBefore - Date.now()); // a serverBusy's retryAfter
    this.notBefore = 0;
    this.#status(this.unavailable ? 'unavailable' : 'reconnecting', { attempt, at: Date.now() + delayMs });
    this.#timer('reconnect', delayMs, () => this.#connect());
  }

  // MARK: Writing

  /** Writes one frame, in order with every other write of the connection (compression is async). */
  #write(code, body) {
    const socket = this.socket;
    if (!socket) return;
    this.writes = this.writes.then(async () => {
      const frame = await encodeFrame(code, body);
      if (socket === this.socket && socket.readyState === WebSocket.OPEN) socket.send(frame);
    }).catch((error) => this.onEvent({ type: 'notice', text: `not sent: ${error.message}` }));
  }

  /** Writes the outbox messages the window lets out. */
  #pump() {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN || Date.now() < this.pausedUntil) return;
    for (let entry = this.outbox.nextToSend(); entry; entry = this.outbox.nextToSend()) {
      if (entry.kind === 'direct') this.#write(Code.direct, { id: entry.id, text: entry.text, to: entry.to });
      else this.#write(Code.broadcast, { id: entry.id, text: entry.text });
    }
  }

  /**
   * Sends `text` to `to` (a name) or to the room (`to` null): kept in the outbox first, then shown
   * (the `pending` event), then written when the window allows. Resolves with the entry.
   */
  async send(to, text) {
    const bytes = jsonTextBytes(text);
    if (bytes > MAX_TEXT_BYTES) throw new RangeError(`not sent: the text is ${bytes} bytes as sent (JSON); at most ${MAX_TEXT_BYTES}`);
    if (this.outbox.isFull) throw new RangeError(`not sent: ${this.outbox.length} messages already wait to be stored`);
    const conversation = to === null ? ROOM : directConversation(this.name, to);
    const entry = await this.store.enqueue({ kind: to === null ? 'room' : 'direct', to, text, conversation, created: Date.now() });
    this.outbox.append(entry);
    this.onEvent({ type: 'pending', entry });
    this.#pump();
    return entry;
  }

  /** Asks for the last `limit` (1–100) messages of `conversation`. */
  requestHistory(conversation, limit) {
    if (this.loggedIn && this.stored) this.#write(Code.historyRequest, { conversation, limit: Math.max(1, Math.min(100, limit)) });
  }

  requestWho() {
    if (this.loggedIn) this.#write(Code.who, { limit: 100 });
  }

  /** The server asked for a pause: one message at a time until the outbox is empty, resent after `seconds`. */
  #pause(seconds) {
    this.outbox.slowDown();
    const until = Date.now() + Math.max(seconds, 1) * 1000;
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    const socket = this.socket;
    this.#timer('retry', until - Date.now(), () => {
      if (socket !== this.socket) return;
      this.pausedUntil = 0;
      this.outbox.rewind();
      this.#pump();
    });
  }

  // MARK: Receiving

  async #received(socket, data) {
    if (socket !== this.socket) return;
    if (!(data instanceof ArrayBuffer)) throw new ProtocolError('a text message: the chat sends binary messages only');
    const { code, body } = await decodeFrame(data);
    if (socket !== this.socket) return;
    this.lastHeard = Date.now();
    if (!this.heard) {
      this.heard = true;
      this.#cancel('connect');
    }
    switch (code) {
      case Code.loginAccepted: return this.#loginAccepted(body);
      case Code.delivery: return this.#delivery(socket, body);
      case Code.stored: return this.#storedAnswer(body);
      case Code.receipt: return this.#receipt(body);
      case Code.history: return this.#history(body);
      case Code.presence:
        return this.onEvent({ type: 'presence', online: body.online ? [body.name] : [], offline: body.online ? [] : [body.name] });
      case Code.presenceChanges:
        if (body.unlisted > 0) this.requestWho();
        return this.onEvent({ type: 'presence', online: body.online ?? [], offline: body.offline ?? [], count: body.onlineCount });
      case Code.onlineUsers: return this.onEvent({ type: 'online', names: body.names ?? [], count: body.onlineCount });
      case Code.heartbeatAck: return undefined;
      case Code.error: return this.#error(socket, body);
      default: throw new ProtocolError(`function code 0x${code.toString(16).padStart(4, '0')} is not one the server sends`);
    }
  }

  #loginAccepted(body) {
    this.loggedIn = true;
    this.stored = body.stored === true;
    if (typeof body.resumeToken === 'string') this.resumeToken = body.resumeToken;
    this.#status('online');
    this.onEvent({ type: 'loggedIn', name: body.name, stored: this.stored, online: body.online ?? [], count: body.onlineCount, resumeToken: this.resumeToken });
  }

  async #delivery(socket, body) {
    const { conversation, seq, from, text, time } = body;
    if (typeof conversation !== 'string' || typeof from !== 'string' || typeof text !== 'string') {
      throw new ProtocolError('a delivery without conversation, from or text');
    }
    const message = { conversation, seq, from, text, time: time ?? Date.now(), direct: body.direct === true };
    if (seq === undefined) {
      if (from !== this.name) this.onEvent({ type: 'message', message, live: true });
      return;
    }
    if (!Number.isSafeInteger(seq) || seq < 1) throw new ProtocolError(`seq ${seq} is out of bounds`);
    const verdict = this.tracker.verdict(conversation, seq);
    if (verdict === 'duplicate') {
      this.#owe(conversation);
      return;
    }
    if (verdict === 'gap') {
      // Not shown; the next login's positions make the server resend from the gap.
      const due = (this.tracker.positions.get(conversation) ?? 0) + 1;
      this.#drop(socket, `a gap in ${conversation}: ${due} was due, ${seq} came`);
      return;
    }
    const known = await this.store.has(conversation, seq);
    await this.store.receive(known ? [] : [message], [[conversation, seq]]);
    this.tracker.moved(conversation, seq);
    if (!known) this.onEvent({ type: 'message', message });
    this.#owe(conversation);
  }

  /** One cumulative `received` per conversation for everything that arrived together. */
  #owe(conversation) {
    this.owed.add(conversation);
    if (this.ackQueued) return;
    this.ackQueued = true;
    setTimeout(() => {
      this.ackQueued = false;
      for (const owed of [...this.owed].sort()) {
        const seq = this.tracker.positions.get(owed);
        if (seq) this.#write(Code.received, { conversation: owed, seq });
      }
      this.owed.clear();
    }, 0);
  }

  async #storedAnswer(body) {
    const entry = this.outbox.acknowledge(body.id);
    if (!entry) return;
    const record = body.seq === undefined
      ? null
      : { conversation: body.conversation, seq: body.seq, from: this.name, text: entry.text, time: Date.now(), direct: entry.kind === 'direct', id: entry.id };
    const known = record ? await this.store.has(record.conversation, record.seq) : false;
    await this.store.settle(entry.id, known ? null : record);
    if (this.outbox.length === 0) this.rateNoticeShown = false; // the next pause is news again
    this.onEvent({ type: 'stored', entry, record, known });
    this.#pump();
  }

  async #receipt(body) {
    const { conversation, seq } = body;
    if ((this.receipts.get(conversation) ?? 0) >= seq) return;
    this.receipts.set(conversation, seq);
    await this.store.setReceipt(conversation, seq);
    this.onEvent({ type: 'receipt', conversation, seq, by: body.by });
  }

  async #history(body) {
    const messages = (body.messages ?? []).map((m) => ({ conversation: body.conversation, seq: m.seq, from: m.from, text: m.text, time: m.time, direct: body.conversation !== ROOM }));
    const added = await this.store.keepHistory(messages);
    this.onEvent({ type: 'history', conversation: body.conversation, added, count: messages.length });
  }

  async #error(socket, body) {
    const { code, detail = '', id, retryAfter } = body;
    if (id !== undefined) {
      if (REFUSED_FOR_GOOD.has(code)) {
        const entry = this.outbox.acknowledge(id);
        if (entry) {
          await this.store.settle(id, null);
          this.onEvent({ type: 'refused', entry, code, detail });
          this.#pump();
        }
        return;
      }
      if (code === 'rateLimited' || (code === 'storeUnavailable' && retryAfter !== undefined)) {
        this.#pause(retryAfter ?? 1);
        if (!this.rateNoticeShown) this.onEvent({ type: 'notice', text: `${detail}; resending in ${retryAfter ?? 1} s` });
        this.rateNoticeShown = true;
        return;
      }
      return; // stays in the outbox for the next connection
    }
    if (!this.loggedIn && LOGIN_REFUSALS.has(code)) {
      this.stop();
      this.onEvent({ type: 'loginFailed', code, detail, retryAfter });
      return;
    }
    switch (code) {
      case 'replaced':
        this.stop();
        this.onEvent({ type: 'replaced', detail });
        return;
      case 'serverShuttingDown':
        this.onEvent({ type: 'notice', text: 'server going away; reconnecting' });
        this.schedule.reset();
        this.unavailable = false;
        return;
      case 'serverBusy': // answers the login: log in again after retryAfter, plus up to 1 s of jitter
        this.onEvent({ type: 'notice', text: detail });
        this.notBefore = Date.now() + (retryAfter ?? 1) * 1000 + this.random() * 1000;
        this.#drop(socket, 'the server is busy');
        return;
      case 'storeUnavailable': // answers the login: log in again after retryAfter
        this.onEvent({ type: 'notice', text: detail });
        this.#drop(socket, 'the server cannot store now');
        return;
      default:
        this.onEvent({ type: 'notice', text: `${code}: ${detail}` });
    }
  }
}
