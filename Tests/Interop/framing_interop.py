#!/usr/bin/env python3
"""A second, independent implementation of every SocketFraming wire format, in Python's standard library
(struct, zlib, json), for the interoperability tests (Tests/SocketFramingTests/InteropTests.swift).

    framing_interop.py produce CODEC   writes the canonical messages of CODEC, framed, to stdout
    framing_interop.py consume CODEC   reads framed bytes from stdin, prints one line per message
    framing_interop.py codecs          lists the codec names

The canonical messages below are repeated, as literals, in the Swift test: the Swift decoder must decode
what `produce` writes into exactly those messages, and `consume` must print exactly the expected lines for
what the Swift encoder wrote. Formats: docs/BINARY-ENCODING.md and the SocketFraming doc comments.
"""
import json
import struct
import sys
import zlib


def pattern(count, seed):
    """Bytes (i * 31 + seed) mod 256: the same in the Swift test."""
    return bytes((i * 31 + seed) % 256 for i in range(count))


def text(count, seed):
    """Printable ASCII 0x20...0x7E, never CR or LF: the same in the Swift test."""
    return bytes(0x20 + (i * 31 + seed) % 95 for i in range(count))


BODIES = [b"", b"hello", pattern(300, 1), pattern(70000, 2)]
TEXT_BODIES = [b"", b"hello", text(300, 1), text(5000, 2)]
FIXED_BODIES = [pattern(8, seed) for seed in range(4)]
SEVEN = [(1, 10, False, b"hi"), (2, 0x0102, True, text(2000, 3)), (3, 0xFFFF, False, b""), (1, 1, True, pattern(70000, 2))]
EIGHT = [(1, b"hi"), (0xDEADBEEF, b""), (7, pattern(300, 1)), (2, pattern(70000, 2))]
JSON_FRAMES = [({}, b"hello"), ({"to": "bob", "n": 3}, pattern(300, 1)), ({"type": "chat", "from": "ann"}, b""),
               ({}, text(5000, 2))]
# InteropMessage(id, user, admin, room, tags, ratio, blob, scores, level, reply: (version, user) or None)
BINARY = [
    (1, "ann", False, 7, ["a", ""], 0.5, b"\x00\xff", [1, None, -2], -1, None),
    (2**64 - 1, "b\u00e9", True, None, [], -1.25, b"", [], 127, (3, "bob")),
    (42, "", True, -(2**31), ["x" * 300], 1e300, pattern(1000, 5), [None], 0, (0, "")),
]


def gzip_compress(data):
    compressor = zlib.compressobj(wbits=31)
    return compressor.compress(data) + compressor.flush()


def frame_binary_message(message):
    """InteropMessage in the format of docs/BINARY-ENCODING.md, 4-byte big-endian length prefixes."""
    id_, user, admin, room, tags, ratio, blob, scores, level, reply = message

    def string(value):
        raw = value.encode("utf-8")
        return struct.pack(">I", len(raw)) + raw

    out = struct.pack(">Q", id_) + string(user) + struct.pack(">?", admin)
    out += b"\x00" if room is None else b"\x01" + struct.pack(">i", room)
    out += struct.pack(">I", len(tags)) + b"".join(string(tag) for tag in tags)
    out += struct.pack(">d", ratio)
    out += struct.pack(">I", len(blob)) + blob
    out += struct.pack(">I", len(scores))
    out += b"".join(b"\x00" if score is None else b"\x01" + struct.pack(">h", score) for score in scores)
    out += struct.pack(">b", level)
    out += b"\x00" if reply is None else b"\x01" + struct.pack(">H", reply[0]) + string(reply[1])
    return out


class Reader:
    def __init__(self, data):
        self.data, self.offset = data, 0

    def take(self, count):
        if self.offset + count > len(self.data):
            raise ValueError(f"input ends at byte {len(self.data)}, needed {count} bytes at {self.offset}")
        chunk = self.data[self.offset:self.offset + count]
        self.offset += count
        return chunk

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def flag(self):
        value = self.unpack(">B")
        if value not in (0, 1):
            raise ValueError(f"flag {value} at byte {self.offset - 1}")
        return value == 1

    def string(self):
        return self.take(self.unpack(">I")).decode("utf-8")

    def at_end(self):
        return self.offset == len(self.data)


def parse_binary_message(data):
    r = Reader(data)
    id_ = r.unpack(">Q")
    user = r.string()
    admin = r.flag()
    room = r.unpack(">i") if r.flag() else None
    tags = [r.string() for _ in range(r.unpack(">I"))]
    ratio = r.unpack(">d")
    blob = r.take(r.unpack(">I"))
    scores = [r.unpack(">h") if r.flag() else None for _ in range(r.unpack(">I"))]
    level = r.unpack(">b")
    reply = (r.unpack(">H"), r.string()) if r.flag() else None
    if not r.at_end():
        raise ValueError("trailing bytes")
    return id_, user, admin, room, tags, ratio, blob, scores, level, reply


def produce(codec):
    out = bytearray()
    if codec == "length-prefixed":
        for body in BODIES:
            out += struct.pack(">I", len(body)) + body
    elif codec == "length-le16-inclusive":
        for body in BODIES[:3]:
            out += struct.pack("<H", len(body) + 2) + body
    elif codec == "length-netty6":
        # Netty's sixth javadoc example: HDR1, 2-byte length of the content, HDR2, content.
        for body in BODIES[:3]:
            out += b"\xca" + struct.pack(">H", len(body)) + b"\xfe" + body
    elif codec == "delimiter-crlf":
        for body in TEXT_BODIES:
            out += body + b"\r\n"
    elif codec == "lines":
        for index, body in enumerate(TEXT_BODIES):
            out += body + (b"\r\n" if index % 2 == 0 else b"\n")
    elif codec == "fixed-8":
        for body in FIXED_BODIES:
            out += body
    elif codec == "seven-byte":
        for version, function_code, compressed, body in SEVEN:
            wire = zlib.compress(body) if compressed else body
            out += struct.pack(">HHBH", version, function_code, int(compressed), len(wire)) + wire
    elif codec in ("eight-byte", "eight-byte-gzip"):
        for service_id, body in EIGHT:
            wire = gzip_compress(body) if codec == "eight-byte-gzip" else body
            out += struct.pack(">II", service_id, len(wire)) + wire
    elif codec == "json-header":
        for index, (fields, body) in enumerate(JSON_FRAMES):
            if index == 0:  # article 000: pretty-printed, the size as a string
                header = json.dumps({"size": str(len(body)), **fields}, indent=2)
            elif index == 3:
                header = json.dumps({"size": str(len(body)), **fields})
            else:
                header = json.dumps({"size": len(body), **fields})
            out += header.encode("utf-8") + b"\r\n" + body
    elif codec == "binary":
        for message in BINARY:
            body = frame_binary_message(message)
            out += struct.pack(">I", len(body)) + body
    else:
        raise SystemExit(f"unknown codec {codec}")
    return bytes(out)


def consume(codec, data):
    r = Reader(data)
    lines = []
    while not r.at_end():
        if codec == "length-prefixed":
            lines.append(r.take(r.unpack(">I")).hex())
        elif codec == "length-le16-inclusive":
            lines.append(r.take(r.unpack("<H") - 2).hex())
        elif codec == "delimiter-crlf":
            end = data.index(b"\r\n", r.offset)
            lines.append(r.take(end - r.offset).hex())
            r.take(2)
        elif codec == "fixed-8":
            lines.append(r.take(8).hex())
        elif codec == "seven-byte":
            version, function_code, compressed, length = struct.unpack(">HHBH", r.take(7))
            body = r.take(length)
            body = zlib.decompress(body) if compressed else body
            lines.append(f"{version} {function_code} {compressed} {body.hex()}")
        elif codec in ("eight-byte", "eight-byte-gzip"):
            service_id, length = struct.unpack(">II", r.take(8))
            body = r.take(length)
            body = zlib.decompress(body, wbits=31) if codec == "eight-byte-gzip" else body
            lines.append(f"{service_id} {body.hex()}")
        elif codec == "json-header":
            end = data.index(b"\r\n", r.offset)
            header = json.loads(r.take(end - r.offset))
            r.take(2)
            size = int(header.pop("size"))
            lines.append(f"{json.dumps(header, sort_keys=True, separators=(',', ':'))} {r.take(size).hex()}")
        elif codec == "binary":
            message = parse_binary_message(r.take(r.unpack(">I")))
            id_, user, admin, room, tags, ratio, blob, scores, level, reply = message
            lines.append(f"{id_} {json.dumps(user)} {admin} {room} {json.dumps(tags)} {ratio!r} {blob.hex()} "
                         f"{scores} {level} {reply and (reply[0], reply[1])}")
        else:
            raise SystemExit(f"unknown codec {codec}")
    return lines


CODECS = ["length-prefixed", "length-le16-inclusive", "length-netty6", "delimiter-crlf", "lines", "fixed-8",
          "seven-byte", "eight-byte", "eight-byte-gzip", "json-header", "binary"]


def main(argv):
    if len(argv) == 2 and argv[1] == "codecs":
        print("\n".join(CODECS))
    elif len(argv) == 3 and argv[1] == "produce":
        sys.stdout.buffer.write(produce(argv[2]))
    elif len(argv) == 3 and argv[1] == "consume":
        for line in consume(argv[2], sys.stdin.buffer.read()):
            print(line)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
