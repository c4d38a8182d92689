// The web client's page: login, then the chat (docs/PROTOCOL.md "WebSocket"). The name and password
// stay in this tab's sessionStorage (kept across a reload or a tab crash, not after the tab is closed)
// so a reload logs in again on its own; the outbox and positions are in IndexedDB (store.js).
//
// Query parameters, for tests and operators: `heartbeat=S` (the heartbeat interval in seconds,
// default 180).

import { ROOM, directConversation } from './frame.js';
import { ChatLink } from './link.js';
import { ChatStore } from './store.js';
import { StatusBar } from './status.js';
import { ChatView } from './view.js';

const $ = (id) => document.getElementById(id);
const SESSION_KEY = 'imchat.login';
const parameters = new URLSearchParams(location.search);
const heartbeatSeconds = Number(parameters.get('heartbeat')) || 180;

const status = new StatusBar();
let link = null;
let store = null;
let me = '';
/** The conversation whose history was asked for and not yet answered (one request at a time). */
let historyAsked = null;

function askHistory(conversation, limit) {
  if (!link?.loggedIn || !link.stored || historyAsked === conversation) return;
  historyAsked = conversation;
  link.requestHistory(conversation, limit);
}

const view = new ChatView({
  onOpen(conversation, count) {
    notice('');
    if (count < 20) askHistory(conversation, 50);
    $('text').placeholder = conversation === ROOM ? 'Message to everyone, or /to name text' : `Message to ${view.label(conversation)}`;
  },
});

function notice(text) {
  $('notice').textContent = text;
}

function chatURL() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/chat`;
}

function showLogin(error = '') {
  $('chat').hidden = true;
  $('logout').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = error;
  status.set('offline');
  $('name').focus();
}

async function logIn(name, password) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify({ name, password }));
  me = name;
  store = await ChatStore.open(name);
  const state = await store.load();
  view.reset(name, state.receipts);
  for (const message of await store.messages()) view.add(message);
  for (const entry of state.outbox) view.add(pendingRecord(entry));
  status.setWaiting(state.outbox.length);
  status.setLiveOnly(false);
  $('login').hidden = true;
  $('chat').hidden = false;
  $('logout').hidden = false;
  view.open(ROOM);
  link = new ChatLink({
    url: chatURL(), name, password: password || undefined, store, state, heartbeatMs: heartbeatSeconds * 1000,
    onEvent: handle,
  });
  link.start();
  $('text').focus();
}

function pendingRecord(entry) {
  return { conversation: entry.conversation, id: entry.id, from: me, text: entry.text, time: entry.created };
}

function logOut(error = '') {
  link?.stop();
  link = null;
  store?.close();
  store = null;
  sessionStorage.removeItem(SESSION_KEY);
  showLogin(error);
}

function handle(event) {
  switch (event.type) {
    case 'status':
      status.set(event.state, event.at);
      if (event.state !== 'online') view.setOnline([], -1); // who is online is known again after the login
      break;
    case 'loggedIn':
      view.setOnline(event.online, event.count);
      status.setLiveOnly(!event.stored);
      historyAsked = null;
      if (view.items(view.active) < 20) askHistory(view.active, 50);
      break;
    case 'loginFailed':
      logOut(event.retryAfter ? `${event.detail} (try again in ${event.retryAfter} s)` : event.detail || event.code);
      break;
    case 'replaced':
      logOut('logged in elsewhere (another tab or device took this name over)');
      break;
    case 'message':
      view.add(event.message, { unread: event.message.from !== me });
      break;
    case 'pending':
      view.add(pendingRecord(event.entry));
      status.setWaiting(link.outbox.length);
      break;
    case 'stored':
      view.settle(event.entry, event.record ?? null);
      status.setWaiting(link.outbox.length);
      break;
    case 'refused':
      view.settle(event.entry, null, 'refused');
      notice(`not sent (${event.code}): ${event.detail}`);
      status.setWaiting(link.outbox.length);
      break;
    case 'receipt':
      view.setReceipt(event.conversation, event.seq);
      break;
    case 'history': {
      // Older messages go above: the one at the top stays where it was.
      const list = $('messages');
      const height = list.scrollHeight;
      const atTop = list.scrollTop === 0 && list.children.length > 0;
      for (const message of event.added) view.add(message);
      if (atTop && event.conversation === view.active) list.scrollTop = list.scrollHeight - height;
      if (historyAsked === event.conversation) historyAsked = null;
      break;
    }
    case 'presence':
      view.changePresence(event.online, event.offline, event.count);
      break;
    case 'online': // onlineUsers counts this session too; the login's onlineCount does not
      view.setOnline(event.names, event.count - 1);
      break;
    case 'notice':
      notice(event.text);
      historyAsked = null; // a refused history request (historyUnavailable, badRequest) comes as one
      break;
    default:
      break;
  }
}

/** `/to NAME TEXT` to one user; anything else to the open conversation. */
async function submit(line) {
  if (!link) return;
  let to = null;
  let text = line;
  const command = /^\/to\s+(\S+)\s+([\s\S]+)$/u.exec(line);
  if (line.startsWith('/to')) {
    if (!command) return notice('usage: /to NAME TEXT');
    [, to, text] = command;
  } else if (line.startsWith('/') && !line.startsWith('//')) {
    return notice('commands: /to NAME TEXT (a direct message); start with // to send a line beginning with /');
  } else {
    if (line.startsWith('//')) text = line.slice(1);
    const active = view.active;
    if (active !== ROOM) to = active.slice('direct:'.length).split(' ').find((name) => name !== me) ?? me;
  }
  if (text.trim() === '') return undefined;
  notice('');
  try {
    await link.send(to, text);
    if (to !== null && view.active !== directConversation(me, to) && command) notice(`sent to ${to}`);
  } catch (error) {
    notice(error.message);
  }
  return undefined;
}

/** At the top of the list: the last 25 more of the conversation (a history holds at most 100). */
function historyOnScroll() {
  const list = $('messages');
  if (list.scrollTop > 0 || !link) return;
  const items = list.children.length;
  const oldest = list.firstElementChild?.record?.seq;
  if (oldest === 1 || items >= 100) return;
  askHistory(view.active, Math.min(100, items + 25));
}

function start() {
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $('name').value.trim();
    const password = $('password').value;
    if (!name) return;
    localStorage.setItem('imchat.lastName', name);
    $('password').value = '';
    logIn(name, password).catch((error) => showLogin(`cannot open this browser's storage: ${error.message}`));
  });
  $('compose').addEventListener('submit', (event) => {
    event.preventDefault();
    const line = $('text').value;
    $('text').value = '';
    submit(line);
  });
  $('logout').addEventListener('click', () => logOut());
  $('messages').addEventListener('scroll', historyOnScroll);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) view.open(view.active);
  });
  const saved = sessionStorage.getItem(SESSION_KEY);
  let login = null;
  try {
    login = saved ? JSON.parse(saved) : null;
  } catch {
    login = null;
  }
  if (login && typeof login.name === 'string') {
    logIn(login.name, login.password ?? '').catch((error) => showLogin(error.message));
  } else {
    $('name').value = localStorage.getItem('imchat.lastName') ?? '';
    showLogin();
  }
}

start();
