#!/usr/bin/env python3
"""A chat client for protocol version 2 of im-server, written from docs/PROTOCOL.md alone, in Python's
standard library only. Used by Tests/ChatEndToEndTests/PythonClientTests.swift.

Library: ChatClientV2 (connect, login with name / password / client instance / positions, numbered direct
messages and broadcasts with a persistent outbox resent in id order after every reconnect, cumulative
`received` acknowledgements, de-duplication by sequence number, history).

Command line (every line printed is flushed at once):

    chat_client_v2.py --port P --name carl --password pw [--state FILE] send bob 1..N
        sends "message 1" ... "message N" to bob; prints `stored ID SEQ` for each; exits 0 when all are stored
    chat_client_v2.py ... broadcast 1..N            the same, to the room
    chat_client_v2.py ... resume                    resends what the state file's outbox holds, then exits
    chat_client_v2.py ... receive --count N         prints `delivery CONVERSATION SEQ FROM TEXT` once per
                                                    message; exits 0 after N
    chat_client_v2.py ... history CONVERSATION LIMIT
                                                    prints `message SEQ FROM TEXT` per message, then `history COUNT`

Other lines: `logged in NAME stored=true|false`, `receipt CONVERSATION SEQ BY`, `error CODE [ID] DETAIL`,
`refused ID CODE`, `duplicate CONVERSATION SEQ`, `gap CONVERSATION SEQ`, `dropped`, `reconnected`.

Test hooks: --drop-after K closes the socket (abortively, once) right after the K-th `stored` (send) or the
K-th delivery shown (receive), before acknowledging it, and reconnects; --crash-after K ends the process
with status 70 at the same point, without any goodbye (like kill -9: only what is in the state file survives).

Exit statuses: 0 done; 1 usage or protocol error; 2 a message was refused for good; 3 badPassword;
4 throttled; 5 server unavailable; 6 other login error; 7 history refused (after its `error` line);
70 --crash-after.
"""
import argparse
import errno
import json
import os
import random
import secrets
import selectors
import socket
import struct
import sys
import time
import zlib

VERSION = 2
HEADER = struct.Struct(">HHBH")
MAX_BODY = 65_536
COMPRESS_ABOVE = 512
MAX_INT = 2**53 - 1
WINDOW = 256

LOGIN, LOGIN_ACCEPTED = 0x0001, 0x0002
DIRECT, BROADCAST, DELIVERY, PRESENCE = 0x0010, 0x0011, 0x0012, 0x0013
STORED, RECEIVED, RECEIPT, HISTORY_REQUEST, HISTORY = 0x0014, 0x0015, 0x0016, 0x0017, 0x0018
HEARTBEAT, HEARTBEAT_ACK, ERROR = 0x0020, 0x0021, 0x00F0
SERVER_CODES = {LOGIN_ACCEPTED, DELIVERY, PRESENCE, STORED, RECEIPT, HISTORY, HEARTBEAT_ACK, ERROR}
REFUSED_FOR_GOOD = {"unknownRecipient", "badRequest"}


class ProtocolError(Exception):
    """The peer broke the protocol: the connection is closed."""


class LoginRefused(Exception):
    def __init__(self, code, detail, retry_after=None):
        super().__init__(f"{code}: {detail}")
        self.code, self.detail, self.retry_after = code, detail, retry_after


class HistoryRefused(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code, self.detail = code, detail


class ServerUnavailable(Exception):
    pass


class ConnectionLost(Exception):
    pass


# MARK: - Framing


def encode_frame(code, body):
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(raw) > MAX_BODY:
        raise ValueError(f"body of {len(raw)} bytes is over {MAX_BODY}")
    compressed = 0
    if len(raw) > COMPRESS_ABOVE:
        raw, compressed = zlib.compress(raw), 1
        if len(raw) > 0xFFFF:
            raise ValueError("compressed body does not fit the length field")
    return HEADER.pack(VERSION, code, compressed, len(raw)) + raw


class FrameDecoder:
    """Buffers bytes and peels off every complete frame (sticky packets)."""

    def __init__(self):
        self.buffer = bytearray()

    def feed(self, data):
        self.buffer += data
        frames = []
        while len(self.buffer) >= HEADER.size:
            version, code, z, length = HEADER.unpack_from(self.buffer)
            if version != VERSION:
                raise ProtocolError(f"frame of version {version} on a version 2 connection")
            if z not in (0, 1):
                raise ProtocolError(f"compressed flag {z}")
            if len(self.buffer) < HEADER.size + length:
                break
            body = bytes(self.buffer[HEADER.size:HEADER.size + length])
            del self.buffer[:HEADER.size + length]
            if z == 1:
                inflater = zlib.decompressobj()
                try:
                    body = inflater.decompress(body, MAX_BODY + 1)
                except zlib.error as error:
                    raise ProtocolError(f"bad zlib stream: {error}")
                if len(body) > MAX_BODY or not inflater.eof:
                    raise ProtocolError("body decompresses to more than 64 KiB or is truncated")
            if code not in SERVER_CODES:
                raise ProtocolError(f"unknown function code 0x{code:04X}")
            try:
                message = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as error:
                raise ProtocolError(f"body is not JSON: {error}")
            if not isinstance(message, dict):
                raise ProtocolError("body is not a JSON object")
            frames.append((code, message))
        return frames


# MARK: - Checking bodies


def is_int(value, low):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= MAX_INT


def require(message, key, kind, optional=False):
    if key not in message:
        if optional:
            return None
        raise ProtocolError(f"missing {key!r} in {message}")
    value = message[key]
    ok = {
        "str": lambda v: isinstance(v, str),
        "bool": lambda v: isinstance(v, bool),
        "id": lambda v: is_int(v, 1),
        "uint": lambda v: is_int(v, 0),
        "list": lambda v: isinstance(v, list),
        "dict": lambda v: isinstance(v, dict),
    }[kind](value)
    if not ok:
        raise ProtocolError(f"{key!r} is not a valid {kind} in {message}")
    return value


def is_valid_name(name):
    if not isinstance(name, str) or not 1 <= len(name) <= 32:
        return False
    import unicodedata
    for ch in name:
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            return False
    return True


def is_conversation(value):
    if value == "room":
        return True
    if not isinstance(value, str) or not value.startswith("direct:"):
        return False
    names = value[len("direct:"):].split(" ")
    return len(names) == 2 and all(is_valid_name(n) for n in names)


def direct_conversation(a, b):
    # "sorted by Unicode code points": Python compares str by code points.
    first, second = sorted([a, b])
    return f"direct:{first} {second}"


# MARK: - Saved state


class State:
    """Client instance, next id, outbox, positions and resume token, kept in a JSON file (or in memory)."""

    def __init__(self, path=None):
        self.path = path
        self.client = secrets.token_hex(16)
        self.next_id = 1
        self.outbox = []  # [{"id": n, "to": name or None, "text": s}], in id order
        self.positions = {}
        self.resume_token = None
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                saved = json.load(file)
            self.client = saved["client"]
            self.next_id = saved["nextId"]
            self.outbox = saved["outbox"]
            self.positions = saved["positions"]
            self.resume_token = saved.get("resumeToken")
        self.save()

    def save(self):
        if not self.path:
            return
        temporary = self.path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump({"client": self.client, "nextId": self.next_id, "outbox": self.outbox,
                       "positions": self.positions, "resumeToken": self.resume_token}, file)
        os.replace(temporary, self.path)


# MARK: - The client


class ChatClientV2:
    """One user's version 2 client. Single-threaded: `run_until` reads and handles frames until a
    condition holds. Callbacks (`on_*`) may be replaced; the defaults do nothing."""

    def __init__(self, host, port, name, password=None, state=None, heartbeat_interval=180.0,
                 reconnect_delays=(0.0, 2.0, 4.0), jitter=1.0):
        self.host, self.port, self.name, self.password = host, port, name, password
        self.state = state or State()
        self.heartbeat_interval = heartbeat_interval
        self.reconnect_delays, self.jitter = reconnect_delays, jitter
        self.sock = None
        self.decoder = None
        self.selector = None
        self.logged_in = False
        self.stored_session = None
        self.online = []
        self.in_flight = set()   # ids sent on this connection and not yet answered
        self.unacked = {}        # conversation -> position to acknowledge at the end of this pass
        self.receipts = {}       # conversation -> (by -> highest seq)
        self.histories = []      # history answers not yet taken
        self.errors = []         # (code, detail, id) of errors that answer no numbered message
        self.heartbeat_acks = 0
        self.last_sent = 0.0
        self.heartbeat_sent_at = None
        self.drop_requested = False
        # Callbacks.
        self.on_delivery = lambda conversation, seq, sender, text, direct, time_ms: None
        self.on_stored = lambda id_, conversation, seq: None
        self.on_refused = lambda id_, code, detail: None
        self.on_error = lambda code, detail, id_: None
        self.on_receipt = lambda conversation, seq, by: None
        self.on_duplicate = lambda conversation, seq: None
        self.on_gap = lambda conversation, seq: None
        self.on_presence = lambda name, online: None
        self.on_connection = lambda event: None

    # MARK: Connecting

    def connect(self):
        """Connects and logs in; resends the outbox. Raises LoginRefused or OSError."""
        self.sock = socket.create_connection((self.host, self.port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.decoder = FrameDecoder()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.sock, selectors.EVENT_READ)
        self.logged_in = False
        self.in_flight = set()
        self.unacked = {}
        self.heartbeat_sent_at = None
        login = {"client": self.state.client, "name": self.name, "positions": dict(self.state.positions)}
        if self.password is not None:
            login["password"] = self.password
        if self.state.resume_token:
            login["resumeToken"] = self.state.resume_token
        self._send(LOGIN, login)
        deadline = time.monotonic() + 30
        while not self.logged_in:
            if time.monotonic() > deadline:
                raise ConnectionLost("no answer to login")
            self._pump(deadline - time.monotonic())
        self._fill_window()

    def connect_with_retries(self):
        """Connects, retrying on the documented schedule (at once, 2 s, 4 s, each plus jitter)."""
        last = None
        for attempt, delay in enumerate((None,) + tuple(self.reconnect_delays)):
            if delay is not None:
                time.sleep(delay + random.uniform(0, self.jitter))
            try:
                self.connect()
                return
            except (OSError, ConnectionLost) as error:
                last = error
                self._close_socket()
        raise ServerUnavailable(f"server unavailable: {last}")

    def request_drop(self):
        """Test hook: once the frame being handled is done, cut the connection abortively (RST; the frames
        still unread are lost with it) and reconnect."""
        self.drop_requested = True

    def close(self):
        """Leaves cleanly: acknowledges what arrived, sends a last heartbeat and waits for its answer (by
        then the server has handled everything sent before it), then closes."""
        if self.sock:
            try:
                self._flush_acks()
                before = self.heartbeat_acks
                self._send(HEARTBEAT, {})
                deadline = time.monotonic() + 10
                while self.heartbeat_acks == before and time.monotonic() < deadline:
                    self._pump(deadline - time.monotonic())
                # Deliveries that came meanwhile are acknowledged too (nobody answers `received`).
                self._flush_acks()
            except (OSError, ConnectionLost, ProtocolError):
                pass
        self._close_socket()

    def _close_socket(self):
        if self.selector:
            self.selector.close()
            self.selector = None
        if self.sock:
            self.sock.close()
            self.sock = None
        self.logged_in = False

    # MARK: Sending

    def send_direct(self, to, text):
        return self._enqueue({"to": to, "text": text})

    def send_broadcast(self, text):
        return self._enqueue({"to": None, "text": text})

    def _enqueue(self, entry):
        entry["id"] = self.state.next_id
        self.state.next_id += 1
        self.state.outbox.append(entry)
        self.state.save()  # on disk before it is sent
        if self.logged_in:
            self._fill_window()
        return entry["id"]

    def _fill_window(self):
        for entry in self.state.outbox:
            if len(self.in_flight) >= WINDOW:
                break
            if entry["id"] in self.in_flight:
                continue
            if entry["to"] is None:
                self._send(BROADCAST, {"id": entry["id"], "text": entry["text"]})
            else:
                self._send(DIRECT, {"id": entry["id"], "text": entry["text"], "to": entry["to"]})
            self.in_flight.add(entry["id"])

    def request_history(self, conversation, limit):
        self._send(HISTORY_REQUEST, {"conversation": conversation, "limit": limit})

    def history(self, conversation, limit, timeout=10):
        """The last `limit` messages of `conversation`: a list of (seq, from, text, time). Raises
        HistoryRefused when an error without an id comes first (historyUnavailable, badRequest: the error
        names no request, so the first such error is taken as the answer)."""
        self.request_history(conversation, limit)
        errors_before = len(self.errors)
        deadline = time.monotonic() + timeout
        while True:
            if len(self.errors) > errors_before:
                code, detail, _ = self.errors[errors_before]
                raise HistoryRefused(code, detail)
            for index, answer in enumerate(self.histories):
                if answer["conversation"] == conversation:
                    del self.histories[index]
                    return [(m["seq"], m["from"], m["text"], m["time"]) for m in answer["messages"]]
            if time.monotonic() > deadline:
                raise TimeoutError("no history answer")
            self.run_once(deadline - time.monotonic())

    def _send(self, code, body):
        data = encode_frame(code, body)
        self.sock.setblocking(True)
        try:
            self.sock.sendall(data)
        finally:
            if self.sock:
                self.sock.setblocking(False)
        self.last_sent = time.monotonic()

    # MARK: Receiving

    def run_once(self, timeout=1.0):
        """One pass: waits up to `timeout` for bytes, handles every complete frame, acknowledges once per
        conversation; reconnects (on the documented schedule) when the connection is lost."""
        try:
            self._pump(timeout)
            self._flush_acks()
            self._heartbeat_if_due()
        except (OSError, ConnectionLost) as error:
            self._close_socket()
            self.on_connection(f"lost ({error})")
            self.connect_with_retries()
            self.on_connection("reconnected")

    def run_until(self, condition, timeout=60):
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("condition not met in time")
            self.run_once(min(remaining, 1.0))

    def _pump(self, timeout):
        if not self.selector.select(max(0.0, timeout)):
            return
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        if not data:
            raise ConnectionLost("closed by server")
        for code, body in self.decoder.feed(data):
            self._handle(code, body)
            if self.drop_requested:
                self.drop_requested = False
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.on_connection("dropped")
                raise ConnectionLost("dropped on purpose")

    def _heartbeat_if_due(self):
        now = time.monotonic()
        if self.heartbeat_sent_at is not None and now - self.heartbeat_sent_at > self.heartbeat_interval:
            raise ConnectionLost("no heartbeat acknowledgement within one interval")
        if self.heartbeat_sent_at is None and now - self.last_sent >= self.heartbeat_interval:
            self._send(HEARTBEAT, {})
            self.heartbeat_sent_at = now

    def _flush_acks(self):
        if not self.unacked or not self.sock:
            return
        self.state.save()
        for conversation, seq in sorted(self.unacked.items()):
            self._send(RECEIVED, {"conversation": conversation, "seq": seq})
        self.unacked = {}

    def _handle(self, code, body):
        if code == LOGIN_ACCEPTED:
            require(body, "name", "str")
            self.online = require(body, "online", "list")
            require(body, "onlineCount", "uint")
            token = require(body, "resumeToken", "str")
            self.stored_session = require(body, "stored", "bool")
            self.state.resume_token = token
            self.state.save()
            self.logged_in = True
            self.on_connection(f"logged in {body['name']} stored={'true' if self.stored_session else 'false'}")
        elif code == ERROR:
            error_code = require(body, "code", "str")
            detail = require(body, "detail", "str")
            id_ = require(body, "id", "id", optional=True)
            retry_after = require(body, "retryAfter", "uint", optional=True)
            if not self.logged_in and id_ is None:
                raise LoginRefused(error_code, detail, retry_after)
            if id_ is not None and error_code in REFUSED_FOR_GOOD:
                self.in_flight.discard(id_)
                self.state.outbox = [e for e in self.state.outbox if e["id"] != id_]
                self.state.save()
                self.on_refused(id_, error_code, detail)
                self._fill_window()
            else:
                # Any other code: the message stays in the outbox and is resent after the next reconnect.
                if id_ is None:
                    self.errors.append((error_code, detail, id_))
                self.on_error(error_code, detail, id_)
        elif code == STORED:
            id_ = require(body, "id", "id")
            conversation = require(body, "conversation", "str")
            seq = require(body, "seq", "id", optional=True)
            if not is_conversation(conversation):
                raise ProtocolError(f"bad conversation {conversation!r}")
            was_waiting = any(e["id"] == id_ for e in self.state.outbox)
            self.in_flight.discard(id_)
            if was_waiting:
                self.state.outbox = [e for e in self.state.outbox if e["id"] != id_]
                self.state.save()
                self.on_stored(id_, conversation, seq)
            self._fill_window()
        elif code == DELIVERY:
            sender = require(body, "from", "str")
            text = require(body, "text", "str")
            direct = require(body, "direct", "bool")
            conversation = require(body, "conversation", "str")
            seq = require(body, "seq", "id", optional=True)
            time_ms = require(body, "time", "uint")
            if not is_conversation(conversation):
                raise ProtocolError(f"bad conversation {conversation!r}")
            if seq is None:   # live only: nothing to number or acknowledge
                self.on_delivery(conversation, None, sender, text, direct, time_ms)
                return
            position = self.state.positions.get(conversation, 0)
            if seq <= position:
                self.on_duplicate(conversation, seq)
                self.unacked[conversation] = position
            elif seq == position + 1:
                self.state.positions[conversation] = seq
                self.state.save()  # saved before it is shown: shown at most once, even across a crash
                self.unacked[conversation] = seq
                self.on_delivery(conversation, seq, sender, text, direct, time_ms)
            else:
                self.on_gap(conversation, seq)
        elif code == RECEIPT:
            conversation = require(body, "conversation", "str")
            seq = require(body, "seq", "id")
            by = require(body, "by", "str")
            known = self.receipts.setdefault(conversation, {})
            if seq > known.get(by, 0):
                known[by] = seq
                self.on_receipt(conversation, seq, by)
        elif code == HISTORY:
            require(body, "conversation", "str")
            messages = require(body, "messages", "list")
            if len(messages) > 100:
                raise ProtocolError("history of more than 100 messages")
            for message in messages:
                require(message, "seq", "id")
                require(message, "from", "str")
                require(message, "text", "str")
                require(message, "time", "uint")
            self.histories.append(body)
        elif code == PRESENCE:
            self.on_presence(require(body, "name", "str"), require(body, "online", "bool"))
        elif code == HEARTBEAT_ACK:
            self.heartbeat_acks += 1
            self.heartbeat_sent_at = None


# MARK: - Command line


def say(*parts):
    print(" ".join(str(p) for p in parts), flush=True)


def parse_range(text):
    first, _, last = text.partition("..")
    return range(int(first), int(last or first) + 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description="im-server protocol version 2 client")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--password")
    parser.add_argument("--state", help="JSON file keeping client instance, next id, outbox and positions")
    parser.add_argument("--drop-after", type=int, help="cut the connection once after K events, then reconnect")
    parser.add_argument("--crash-after", type=int, help="exit with status 70 at once after K events")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--quiet", action="store_true", help="print no presence, receipt or duplicate lines")
    commands = parser.add_subparsers(dest="command", required=True)
    send = commands.add_parser("send")
    send.add_argument("to")
    send.add_argument("range")
    broadcast = commands.add_parser("broadcast")
    broadcast.add_argument("range")
    commands.add_parser("resume")
    receive = commands.add_parser("receive")
    receive.add_argument("--count", type=int, required=True)
    history = commands.add_parser("history")
    history.add_argument("conversation")
    history.add_argument("limit", type=int)
    args = parser.parse_args(argv)

    client = ChatClientV2(args.host, args.port, args.name, args.password, State(args.state))
    events = {"count": 0, "dropped": False, "refused": 0}

    def count_event():
        events["count"] += 1
        if args.crash_after is not None and events["count"] == args.crash_after:
            sys.stdout.flush()
            os._exit(70)
        if args.drop_after is not None and events["count"] == args.drop_after and not events["dropped"]:
            events["dropped"] = True
            client.request_drop()

    shown = []
    client.on_connection = lambda event: say(event)
    client.on_stored = lambda id_, conversation, seq: (say("stored", id_, "-" if seq is None else seq),
                                                       count_event() if args.command != "receive" else None)
    client.on_refused = lambda id_, code, detail: (events.__setitem__("refused", events["refused"] + 1),
                                                   say("refused", id_, code))
    client.on_error = lambda code, detail, id_: say("error", code, *([id_] if id_ else []), detail)
    if not args.quiet:
        client.on_receipt = lambda conversation, seq, by: say("receipt", conversation, seq, by)
        client.on_duplicate = lambda conversation, seq: say("duplicate", conversation, seq)
        client.on_presence = lambda name, online: say("presence", name, "online" if online else "offline")
    client.on_gap = lambda conversation, seq: say("gap", conversation, seq)

    def delivered(conversation, seq, sender, text, direct, time_ms):
        shown.append(seq)
        say("delivery", conversation, "-" if seq is None else seq, sender, text)
        if args.command == "receive":
            count_event()
    client.on_delivery = delivered

    try:
        client.connect_with_retries()
        if args.command in ("send", "broadcast"):
            for i in parse_range(args.range):
                if args.command == "send":
                    client.send_direct(args.to, f"message {i}")
                else:
                    client.send_broadcast(f"message {i}")
            client.run_until(lambda: not client.state.outbox, args.timeout)
        elif args.command == "resume":
            client.run_until(lambda: not client.state.outbox, args.timeout)
        elif args.command == "receive":
            client.run_until(lambda: len(shown) >= args.count, args.timeout)
        elif args.command == "history":
            messages = client.history(args.conversation, args.limit)
            for seq, sender, text, _ in messages:
                say("message", seq, sender, text)
            say("history", len(messages))
        client.close()
    except LoginRefused as refusal:
        say("login refused", refusal.code, refusal.detail, *([f"retryAfter={refusal.retry_after}"] if refusal.retry_after is not None else []))
        return {"badPassword": 3, "throttled": 4}.get(refusal.code, 6)
    except HistoryRefused as refusal:
        return 7
    except ServerUnavailable as error:
        say(str(error))
        return 5
    except (ProtocolError, TimeoutError) as error:
        say("failed:", type(error).__name__, error)
        return 1
    return 2 if events["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
