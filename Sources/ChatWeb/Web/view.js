// What the page shows: conversations with unread counts, people online, one conversation's messages
// (times, ✓ stored, ✓✓ received by the other user). Every text goes in with
// textContent, never as HTML.

import { ROOM, compareCodePoints, directConversation, otherName } from './frame.js';

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export class ChatView {
  constructor({ onOpen }) {
    this.onOpen = onOpen;
    this.me = '';
    this.active = ROOM;
    /** conversation → { unread, items: Map(key → record) } */
    this.conversations = new Map();
    this.online = new Set();
    this.onlineCount = 0;
    this.receipts = new Map();
  }

  reset(me, receipts) {
    this.me = me;
    this.active = ROOM;
    this.conversations = new Map([[ROOM, { unread: 0, items: new Map() }]]);
    this.online = new Set();
    this.receipts = new Map(receipts);
    $('messages').replaceChildren();
    this.renderConversations();
    this.renderOnline();
    this.renderTitle();
  }

  #conversation(id) {
    let conversation = this.conversations.get(id);
    if (!conversation) {
      conversation = { unread: 0, items: new Map() };
      this.conversations.set(id, conversation);
      this.renderConversations();
    }
    return conversation;
  }

  label(conversation) {
    if (conversation === ROOM) return 'Everyone';
    const other = otherName(conversation, this.me);
    return other === this.me ? `${other} (you)` : other;
  }

  /** Opens `conversation` (the room, or `direct:…`) and clears its unread count. */
  open(conversation) {
    this.active = conversation;
    this.#conversation(conversation).unread = 0;
    this.renderConversations();
    this.renderOnline();
    this.renderTitle();
    const list = $('messages');
    list.replaceChildren(...this.#sorted(conversation).map((record) => this.#node(record)));
    list.scrollTop = list.scrollHeight;
    this.onOpen(conversation, this.#conversation(conversation).items.size);
  }

  /** How many messages `conversation` holds here. */
  items(conversation) {
    return this.conversations.get(conversation)?.items.size ?? 0;
  }

  openWith(name) {
    this.open(directConversation(this.me, name));
  }

  renderTitle() {
    $('conversation-title').textContent = this.active === ROOM ? 'Everyone' : `With ${this.label(this.active)}`;
  }

  renderConversations() {
    const ids = [...this.conversations.keys()].sort((a, b) => (a === ROOM ? -1 : b === ROOM ? 1 : compareCodePoints(a, b)));
    $('conversations').replaceChildren(...ids.map((id) => {
      const button = element('button');
      button.type = 'button';
      button.dataset.conversation = id;
      button.setAttribute('aria-current', String(id === this.active));
      const unread = this.conversations.get(id).unread;
      button.append(element('span', 'name', this.label(id)), element('span', 'unread', unread > 0 ? String(unread) : ''));
      button.setAttribute('aria-label', unread > 0 ? `${this.label(id)}, ${unread} unread` : this.label(id));
      button.addEventListener('click', () => this.open(id));
      const item = element('li');
      item.append(button);
      return item;
    }));
  }

  renderOnline() {
    const names = [...this.online].filter((name) => name !== this.me).sort(compareCodePoints);
    $('online-title').textContent = `Online (${Math.max(this.onlineCount, names.length + 1)})`;
    $('online').replaceChildren(...names.map((name) => {
      const button = element('button', null);
      button.type = 'button';
      button.dataset.name = name;
      button.append(element('span', 'name', name));
      button.setAttribute('aria-label', `Write to ${name}`);
      button.addEventListener('click', () => this.openWith(name));
      const item = element('li');
      item.append(button);
      return item;
    }));
  }

  setOnline(names, count) {
    this.online = new Set(names);
    if (count !== undefined) this.onlineCount = count + 1;
    this.renderOnline();
  }

  changePresence(online, offline, count) {
    for (const name of online) this.online.add(name);
    for (const name of offline) this.online.delete(name);
    if (count !== undefined) this.onlineCount = count;
    this.renderOnline();
  }

  // MARK: Messages

  static key(record) {
    return record.seq !== undefined && record.seq !== null ? `s${record.seq}` : `p${record.id ?? record.time}`;
  }

  #sorted(conversation) {
    const items = [...this.#conversation(conversation).items.values()];
    return items.sort(ChatView.order);
  }

  static order(a, b) {
    const aSeq = a.seq ?? Infinity;
    const bSeq = b.seq ?? Infinity;
    if (aSeq !== bSeq) return aSeq - bSeq;
    return (a.id ?? a.time) - (b.id ?? b.time);
  }

  /** Shows `record` (a message shown, pending, or from history) in its conversation; counts unread ones. */
  add(record, { unread = false } = {}) {
    const conversation = this.#conversation(record.conversation);
    const key = ChatView.key(record);
    conversation.items.set(key, record);
    if (record.conversation === this.active) this.#insert(record);
    if (unread && (record.conversation !== this.active || document.hidden)) {
      conversation.unread += 1;
      this.renderConversations();
    }
  }

  /** Pending message `entry` became `record` (stored), or was refused (`record` null). */
  settle(entry, record, state = 'stored') {
    const conversation = this.#conversation(entry.conversation);
    conversation.items.delete(`p${entry.id}`);
    const pending = this.#find(entry.conversation, `p${entry.id}`);
    if (record) {
      const kept = this.#conversation(record.conversation).items.get(ChatView.key(record));
      pending?.remove();
      this.add(kept ?? record);
    } else if (pending) {
      pending.dataset.state = state;
      pending.querySelector('.mark').textContent = state === 'refused' ? '✗' : '✓';
    }
  }

  setReceipt(conversation, seq) {
    this.receipts.set(conversation, seq);
    if (conversation !== this.active) return;
    for (const node of $('messages').querySelectorAll('.message.mine')) this.#mark(node);
  }

  #find(conversation, key) {
    if (conversation !== this.active) return null;
    return $('messages').querySelector(`[data-key="${key}"]`);
  }

  #insert(record) {
    const list = $('messages');
    const key = ChatView.key(record);
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    const node = this.#node(record);
    const existing = list.querySelector(`[data-key="${key}"]`);
    if (existing) {
      existing.replaceWith(node);
      return;
    }
    let before = null;
    for (let child = list.lastElementChild; child; child = child.previousElementSibling) {
      if (ChatView.order(child.record, record) > 0) before = child;
      else break;
    }
    list.insertBefore(node, before);
    if (atBottom && !before) list.scrollTop = list.scrollHeight;
  }

  #node(record) {
    const mine = record.from === this.me;
    const node = element('li', mine ? 'message mine' : 'message');
    node.record = record;
    node.dataset.key = ChatView.key(record);
    node.dataset.conversation = record.conversation;
    if (record.seq) node.dataset.seq = String(record.seq);
    if (record.id) node.dataset.id = String(record.id);
    const when = new Date(record.time);
    const time = element('time', null, (Date.now() - record.time > 86400000 ? dayFormat : timeFormat).format(when));
    time.dateTime = when.toISOString();
    node.append(time, element('span', 'from', record.from), element('span', 'text', record.text));
    if (mine) {
      node.append(element('span', 'mark'));
      this.#mark(node);
    }
    return node;
  }

  /** ✓ stored, ✓✓ received by the other user (a receipt at or past its seq), … still in the outbox. */
  #mark(node) {
    const record = node.record;
    const mark = node.querySelector('.mark');
    if (!mark) return;
    let state = 'pending';
    if (record.refused) state = 'refused';
    else if (record.seq !== undefined && record.seq !== null) {
      state = (this.receipts.get(record.conversation) ?? 0) >= record.seq ? 'received' : 'stored';
    } else if (record.done) state = 'stored';
    node.dataset.state = state;
    mark.textContent = { pending: '…', stored: '✓', received: '✓✓', refused: '✗' }[state];
    mark.title = { pending: 'waiting to be stored', stored: 'stored by the server', received: 'received', refused: 'refused' }[state];
  }
}
