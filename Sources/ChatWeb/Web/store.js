// The page's durable state in IndexedDB, one database per user name (as im-client keeps files per
// name and server; the origin already names the server): the client instance and next message id,
// the outbox (messages not yet answered `stored`), positions (highest seq shown, per conversation),
// receipts (highest seq the other user received, per direct conversation) and the messages shown.
// Every write is a transaction that has committed when its promise resolves (docs/PROTOCOL.md
// "Sending", "Receiving": saved before shown).

import { newClientInstance } from './frame.js';

const SCHEMA = 1;

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function committed(transaction) {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error('transaction aborted'));
  });
}

/** One user's state. Open with `ChatStore.open(name)`. */
export class ChatStore {
  constructor(db) {
    this.db = db;
  }

  static async open(name) {
    const request = indexedDB.open(`imchat:${name}`, SCHEMA);
    request.onupgradeneeded = () => {
      const db = request.result;
      db.createObjectStore('meta');
      db.createObjectStore('outbox', { keyPath: 'id' });
      db.createObjectStore('positions');
      db.createObjectStore('receipts');
      db.createObjectStore('messages', { keyPath: ['conversation', 'seq'] });
    };
    const db = await promised(request);
    const store = new ChatStore(db);
    const transaction = db.transaction('meta', 'readwrite');
    const meta = transaction.objectStore('meta');
    let client = await promised(meta.get('client'));
    if (typeof client !== 'string') {
      client = newClientInstance();
      meta.put(client, 'client');
      meta.put(1, 'nextId');
    }
    await committed(transaction);
    store.client = client;
    return store;
  }

  close() {
    this.db.close();
  }

  /** Everything needed at start: outbox (id order), positions, receipts, next id. */
  async load() {
    const transaction = this.db.transaction(['meta', 'outbox', 'positions', 'receipts'], 'readonly');
    const nextId = await promised(transaction.objectStore('meta').get('nextId'));
    const outbox = await promised(transaction.objectStore('outbox').getAll());
    const positions = await this.#map(transaction.objectStore('positions'));
    const receipts = await this.#map(transaction.objectStore('receipts'));
    return { nextId: nextId ?? 1, outbox, positions, receipts };
  }

  async #map(objectStore) {
    const keys = await promised(objectStore.getAllKeys());
    const values = await promised(objectStore.getAll());
    return new Map(keys.map((key, index) => [key, values[index]]));
  }

  /** Gives `entry` (without id) the next id, keeps it in the outbox; resolves with the entry once committed. */
  async enqueue(entry) {
    const transaction = this.db.transaction(['meta', 'outbox'], 'readwrite');
    const meta = transaction.objectStore('meta');
    const id = (await promised(meta.get('nextId'))) ?? 1;
    const numbered = { ...entry, id };
    meta.put(id + 1, 'nextId');
    transaction.objectStore('outbox').put(numbered);
    await committed(transaction);
    return numbered;
  }

  /** Outbox message `id` answered: removed; with `message`, that message kept as shown. */
  async settle(id, message) {
    const transaction = this.db.transaction(['outbox', 'messages'], 'readwrite');
    transaction.objectStore('outbox').delete(id);
    if (message) transaction.objectStore('messages').put(message);
    await committed(transaction);
  }

  /** Delivered `messages` kept and `positions` (conversation → seq) moved, in one transaction. */
  async receive(messages, positions) {
    const transaction = this.db.transaction(['messages', 'positions'], 'readwrite');
    for (const message of messages) transaction.objectStore('messages').put(message);
    for (const [conversation, seq] of positions) transaction.objectStore('positions').put(seq, conversation);
    await committed(transaction);
  }

  /** History entries kept (they move no position). Resolves with those not kept before. */
  async keepHistory(messages) {
    const transaction = this.db.transaction('messages', 'readwrite');
    const objectStore = transaction.objectStore('messages');
    const added = [];
    for (const message of messages) {
      const known = await promised(objectStore.getKey([message.conversation, message.seq]));
      if (known === undefined) {
        objectStore.put(message);
        added.push(message);
      }
    }
    await committed(transaction);
    return added;
  }

  async setReceipt(conversation, seq) {
    const transaction = this.db.transaction('receipts', 'readwrite');
    transaction.objectStore('receipts').put(seq, conversation);
    await committed(transaction);
  }

  /** True when message `seq` of `conversation` is kept (shown) already. */
  async has(conversation, seq) {
    const transaction = this.db.transaction('messages', 'readonly');
    return (await promised(transaction.objectStore('messages').getKey([conversation, seq]))) !== undefined;
  }

  /** Every kept message, in (conversation, seq) order. */
  async messages() {
    const transaction = this.db.transaction('messages', 'readonly');
    return promised(transaction.objectStore('messages').getAll());
  }
}
