#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets to fuzz/corpus/TARGET/: valid streams of each framing
(from Tests/Interop/framing_interop.py where it has them), each behind the configuration bytes its target
reads first (see fuzz/targets/*.swift); for tls_receive, descriptions of TLS traffic and its mutations
(the harness makes the ciphertext). Run it again after changing a target's configuration bytes."""
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "Interop"))
import framing_interop as interop  # noqa: E402


def string(value):
    raw = value.encode("utf-8")
    return struct.pack(">I", len(raw)) + raw


def login(version, user, admin, room):
    return (struct.pack(">H", version) + string(user) + struct.pack(">?", admin)
            + (b"\x00" if room is None else b"\x01" + struct.pack(">i", room)))


def fuzz_message(reply):
    """A FuzzMessage of fuzz/targets/binary_decoder.swift with 4-byte length prefixes."""
    out = struct.pack(">Q", 9) + login(1, "ann", False, 7) + b"\x02"
    out += struct.pack(">I", 2) + string("a") + string("")
    out += struct.pack(">I", 2) + b"\x01" + struct.pack(">h", -3) + b"\x00"
    out += b"\x01" + login(2, "b\u00e9", True, None) if reply else b"\x00"
    out += b"\x01\x01" + struct.pack(">i", 5)
    out += struct.pack(">d", 0.5) + struct.pack(">f", -1.5) + (2**127 - 1).to_bytes(16, "big")
    out += struct.pack(">I", 3) + b"\x00\x01\x02"
    out += struct.pack(">I", 2) + struct.pack(">I", 1) + b"\x07" + struct.pack(">I", 0)
    out += struct.pack(">I", 2) + b"\x01\x00"
    return out


def tls_receive(tls12, socket_is_server, read_mode, messages, mutations=(), garbage=b"", close_notify=False,
                end_of_stream=False, read_between_chunks=False, chunk_seed=0, read_length=1):
    """An input of fuzz/targets/tls_receive.swift: the configuration bytes, a length byte per message
    (under 240: that many bytes; 240 and up: (byte - 239) * 1100), the mutations (each its bytes,
    see mutate(_:_:)) and the garbage appended to the ciphertext."""
    modes = {"none": 0, "available": 1, "chunks": 2, "never": 3}
    out = bytes([int(tls12), int(socket_is_server), modes[read_mode], read_length - 1, len(messages),
                 0 if close_notify else 1, int(end_of_stream), int(read_between_chunks), chunk_seed])
    out += bytes(messages) + bytes([len(mutations)])
    for mutation in mutations:
        out += bytes(mutation)
    return out + garbage


def flip(position, bits):
    return [0, position >> 8, position & 0xFF, bits]


def forged_header(position, type_index, length_index, body, type_byte=0):
    """A record header of type [0x14, 0x15, 0x16, 0x17, 0x18, type_byte][type_index], TLS 1.2's version,
    length [0, 1, 16, 17, 255, 2^14, 2^14 + 256, 2^14 + 2048, 0xFFFF][length_index], then `body`."""
    return [2, position >> 8, position & 0xFF, type_byte, type_index, length_index, len(body)] + list(body)


def tls_receive_seeds():
    garbage = bytes(range(0x40, 0x60))
    yield "clean-tls13-server", tls_receive(False, True, "available", [5, 120, 239])
    yield "clean-tls12-client-close", tls_receive(True, False, "none", [40, 200], close_notify=True, end_of_stream=True,
                                                  chunk_seed=3)
    yield "flip-tls13-client", tls_receive(False, False, "chunks", [100, 100, 100], [flip(0x0200, 0x40)],
                                           read_between_chunks=True, chunk_seed=9, read_length=7)
    yield "garbage-tail-tls12-server", tls_receive(True, True, "available", [60], garbage=b"\x17\x03\x03\x00\x20" + garbage)
    yield "forged-header-tls13-server", tls_receive(False, True, "available", [50, 50], [forged_header(0x0040, 3, 2, garbage[:16])])
    yield "ccs-tls13-client", tls_receive(False, False, "available", [20], [forged_header(0xFFFF, 0, 1, b"\x01")])
    yield "alert-tls12-server", tls_receive(True, True, "none", [20], [forged_header(0x0030, 1, 2, b"\x02\x28")],
                                            end_of_stream=True)
    yield "plaintext-alert-tls12-server", tls_receive(True, True, "available", [20], garbage=b"\x15\x03\x03\x00\x02\x02\x28")
    yield "plaintext-ccs-tls13-server", tls_receive(False, True, "available", [20], garbage=b"\x14\x03\x03\x00\x01\x01")
    yield "overflow-tls12-client", tls_receive(True, False, "available", [20, 20], [forged_header(0x0010, 3, 8, garbage)])
    yield "truncate-eof-tls13-client", tls_receive(False, False, "never", [150, 150], [[5, 0x01, 0x80]], end_of_stream=True,
                                                   chunk_seed=2)
    yield "replay-tls12-client", tls_receive(True, False, "available", [80, 80], [[4, 0, 0, 30]])
    yield "large-tls13-server", tls_receive(False, True, "chunks", [255], [flip(0x3000, 1)], chunk_seed=40, read_length=64)
    yield "delete-tls12-server", tls_receive(True, True, "never", [30, 30, 30], [[3, 0, 0x50, 7]], read_between_chunks=True,
                                             chunk_seed=1)
    yield "overwrite-tls13-client", tls_receive(False, False, "available", [64, 64], [[6, 0x01, 0x00, 0, 7]])
    yield "close-notify-garbage-tls13-server", tls_receive(False, True, "available", [10], garbage=garbage, close_notify=True,
                                                           end_of_stream=True)


def permessage_deflate(window_bits, no_context_takeover, limit_64, messages):
    """An input of fuzz/targets/permessage_deflate.swift: window bits, context mode, the message limit in
    64-byte units, where messages are cut into two fragments, three messages behind a length byte each,
    then the last message."""
    out = bytearray([window_bits - 8, 1 if no_context_takeover else 0, limit_64, 3])
    for message in messages[:3]:
        assert len(message) < 256
        out += bytes([len(message)]) + message
    out += bytes(3 - len(messages[:3]))
    return bytes(out + b"".join(messages[3:]))


def deflate_messages(messages, window_bits=15, no_context_takeover=False, level=-1):
    """Each message compressed as RFC 7692 §7.2.1 says (raw deflate, Z_SYNC_FLUSH, 00 00 ff ff removed);
    zlib compresses a 256-byte window with 512 bytes, which never refers back further than 250."""
    out, compressor = [], None
    for message in messages:
        if compressor is None or no_context_takeover:
            compressor = zlib.compressobj(level, zlib.DEFLATED, -max(window_bits, 9))
        data = compressor.compress(message) + compressor.flush(zlib.Z_SYNC_FLUSH)
        out.append(data[:-4] or b"\x00")
    return out


def permessage_deflate_seeds():
    hello = bytes.fromhex("f248cdc9c90700")
    yield "hello-context", permessage_deflate(15, False, 1, deflate_messages([b"Hello", b"Hello", b"Hello world", b"Hello"]))
    yield "hello-no-context", permessage_deflate(15, True, 1, deflate_messages([b"Hello", b"Hello"], no_context_takeover=True))
    yield "stored-blocks", permessage_deflate(12, False, 2, deflate_messages([b"Hello" * 10, b"abc"], 12, level=0))
    yield "window-8", permessage_deflate(8, False, 40, deflate_messages(
        [b"abcdefgh" * 40, b"abcdefgh" * 20, b"x" * 300, bytes(range(256)) * 3], 8))
    yield "empty", permessage_deflate(15, False, 0, [b"\x00"] * 3)
    yield "bomb", permessage_deflate(15, False, 16, [b"\x00"] * 3 + deflate_messages([bytes(200_000)]))
    yield "bfinal", permessage_deflate(15, False, 1, [bytes.fromhex("f348cdc9c90700"), hello])
    yield "two-blocks", permessage_deflate(15, False, 1, [bytes.fromhex("f2480500000000ffffcac9c90700")])
    # A match reaching past a 256-byte window: zlib inflates it whole, refuses it cut after 11 bytes.
    yield "window-8-reach-past-window", bytes([0x00, 0x28, 0x2E, 0xCF, 0xA5]) + bytes.fromhex("2a1c483092005d1c4830000100")

def http_upgrade_seeds():
    """Configuration bytes (mode: 0 request, 1 response; chunk seed; limit 64/256/1024/8192), then the head."""
    request = (b"GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://example.com\r\n"
               b"Sec-WebSocket-Protocol: chat, superchat\r\nSec-WebSocket-Version: 13\r\n\r\n")
    deflate = (b"GET /ws?x=1 HTTP/1.1\r\nHost: [::1]:9000\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
               b"Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\nSec-WebSocket-Version: 13\r\n"
               b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, permessage-deflate; "
               b"server_max_window_bits=\"10\"\r\n"
               b"Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n\r\n\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58")
    response = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n"
                b"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n\r\n\x81\x02hi")
    yield "rfc6455-request", bytes([0, 7, 3]) + request
    yield "deflate-offers-and-frame", bytes([0, 3, 3]) + deflate
    yield "plain-request", bytes([0, 0, 1]) + b"\r\nGET /index.html HTTP/1.1\r\nHost: a\r\nAccept: text/html\r\n\r\n"
    yield "version-8-request", bytes([0, 20, 3]) + request.replace(b"Version: 13", b"Version: 8")
    yield "obs-fold", bytes([0, 5, 2]) + b"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n"
    yield "rfc6455-response", bytes([1, 9, 3]) + response
    yield "redirect-response", bytes([1, 2, 2]) + b"HTTP/1.1 302 Found\r\nLocation: ws://elsewhere/\r\nContent-Length: 0\r\n\r\n"

def websocket_frame(first, payload, key=None):
    """A WebSocket frame (RFC 6455 5.2): the first byte as given, the minimal length, masked with key if given."""
    n = len(payload)
    mask = 0x80 if key else 0
    if n <= 125:
        head = bytes([first, mask | n])
    elif n <= 0xFFFF:
        head = bytes([first, mask | 126]) + struct.pack(">H", n)
    else:
        head = bytes([first, mask | 127]) + struct.pack(">Q", n)
    if not key:
        return head + payload
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def websocket_frame_seeds():
    """Streams for fuzz/targets/websocket_frame.swift behind its configuration bytes (role, frame limit,
    allowed reserved bits, message limit, chunk seed): the RFC 6455 5.7 examples, fragments with a ping
    between them, a close, UTF-8 split across fragments and Autobahn 6.4.1's invalid sequence."""
    key = b"\x37\xfa\x21\x3d"
    server = bytes([1, 255, 0, 255, 3])
    client = bytes([0, 255, 0, 255, 5])
    kosme = "\u03ba\u1f79\u03c3\u03bc\u03b5".encode()
    yield "server-masked-hello", server + websocket_frame(0x81, b"Hello", key)
    yield "server-fragmented-ping-between", server + websocket_frame(0x01, b"Hel", key) \
        + websocket_frame(0x89, b"p", key) + websocket_frame(0x80, b"lo", key)
    yield "server-close-1000-bye", server + websocket_frame(0x88, b"\x03\xe8bye", key)
    yield "server-utf8-split", server + websocket_frame(0x01, kosme[:3], key) + websocket_frame(0x80, kosme[3:], key)
    yield "server-invalid-utf8-6.4.1", server + websocket_frame(0x01, kosme, key) \
        + websocket_frame(0x00, b"\xf4\x90\x80\x80", key) + websocket_frame(0x80, b"edited", key)
    yield "server-rsv1-allowed", bytes([1, 255, 0x40, 255, 2]) + websocket_frame(0xC1, b"\xf2\x48\xcd\xc9\xc9\x07\x00", key)
    yield "client-hello-ping-pong", client + websocket_frame(0x81, b"Hello") + websocket_frame(0x89, b"Hello") \
        + websocket_frame(0x8A, b"")
    yield "client-256-binary", bytes([0, 44, 0, 255, 7]) + websocket_frame(0x82, bytes(range(256)))
    yield "client-16bit-length-edge", client + websocket_frame(0x82, bytes(126))


def seeds():
    small = [b"", b"hello", interop.pattern(200, 1)]
    length_prefixed = b"".join(struct.pack(">I", len(body)) + body for body in small)
    yield "length_field", "lengthPrefixed", bytes([3, 0, 1, 0, 4, 1, 255, 0]) + length_prefixed
    yield "length_field", "lengthPrefixed-cut", bytes([3, 0, 1, 0, 4, 1, 255, 7]) + length_prefixed
    yield "length_field", "netty6", bytes([1, 1, 1, 1, 3, 0, 255, 3]) + interop.produce("length-netty6")[:40]
    yield "length_field", "u8-inclusive", bytes([0, 0, 0, 0xFF, 0, 1, 200, 2]) + b"\x07hello\x02"
    yield "length_field", "u64-le", bytes([4, 0, 0, 0, 8, 1, 100, 5]) + struct.pack("<Q", 2) + b"hi"

    delimited = b"\x02\x03\x00\x01\x04\x00\x01\x00\x01\x02\x02\x04\x00\x01"
    yield "delimiter", "one", bytes([0, 1, 0, 1, 1, 1, 200, 0]) + delimited
    yield "delimiter", "two-overlapping", bytes([1, 1, 0, 1, 0, 1, 1, 1, 200, 3]) + delimited
    yield "delimiter", "three-keep", bytes([2, 0, 1, 2, 2, 3, 0, 0, 0, 0, 1, 40, 9]) + delimited * 3
    yield "delimiter", "too-long", bytes([0, 1, 0, 1, 1, 0, 3, 2]) + b"\x02" * 10 + b"\x00\x01\x03\x00\x01"

    json_stream = interop.produce("json-header")
    yield "json_header", "python", bytes([255, 255, 0]) + json_stream[:700]
    yield "json_header", "small", bytes([64, 64, 5]) + b'{"size":2,"to":"bob"}\r\nhi{"size":"0"}\r\n'
    yield "json_header", "pretty", bytes([64, 64, 1]) + b'{\n  "size" : "3"\n}\r\nabc'

    seven = b"".join(
        struct.pack(">HHBH", version, code, int(compressed), len(wire)) + wire
        for version, code, compressed, body in [(1, 10, False, b"hi"), (2, 3, True, b"hello hello hello"), (3, 4, False, b"")]
        for wire in [zlib.compress(body) if compressed else body])
    yield "seven_byte_header", "zlib", bytes([0, 255, 0, 0]) + seven
    yield "seven_byte_header", "zlib-cut", bytes([0, 255, 3, 2]) + seven
    yield "seven_byte_header", "known-codes", bytes([0, 255, 1, 3]) + seven
    yield "seven_byte_header", "junk-first", bytes([0, 255, 0, 1]) + b"\x11\x12" + seven

    eight = b"".join(struct.pack(">II", sid, len(body)) + body for sid, body in [(1, b"hi"), (2, b""), (3, interop.pattern(100, 2))])
    yield "eight_byte_header", "plain", bytes([255, 0, 0]) + eight
    zipped = zlib.compress(b"hello " * 20)
    yield "eight_byte_header", "zlib", bytes([255, 1, 4]) + struct.pack(">II", 5, len(zipped)) + zipped

    yield "fixed_length", "eight", bytes([7, 0]) + interop.produce("fixed-8")
    yield "fixed_length", "eight-cut", bytes([7, 3]) + interop.produce("fixed-8")

    yield "zlib", "zlib", bytes([0, 255]) + zlib.compress(b"sticky packets " * 30)
    yield "zlib", "gzip", bytes([1, 255]) + interop.gzip_compress(b"half packets " * 30)
    raw = zlib.compressobj(wbits=-15)
    yield "zlib", "raw", bytes([2, 255]) + raw.compress(b"raw deflate" * 30) + raw.flush()

    yield "binary_decoder", "message", bytes([2]) + fuzz_message(reply=False)
    yield "binary_decoder", "message-reply", bytes([2]) + fuzz_message(reply=True)
    yield "binary_decoder", "dictionary", bytes([2]) + struct.pack(">I", 2) + string("a") + struct.pack(">I", 1) + b"\x01" \
        + string("b") + struct.pack(">I", 0)

    for name, data in tls_receive_seeds():
        yield "tls_receive", name, data
    for name, data in http_upgrade_seeds():
        yield "http_upgrade", name, data

    for name, data in websocket_frame_seeds():
        yield "websocket_frame", name, data

    for name, data in permessage_deflate_seeds():
        yield "permessage_deflate", name, data


def main():
    for target, name, data in seeds():
        directory = os.path.join(HERE, "corpus", target)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)


if __name__ == "__main__":
    main()
