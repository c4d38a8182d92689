// The chat protocol's frames (docs/PROTOCOL.md "Framing: the seven-byte header", "Version 2"):
// version (2 bytes), function code (2), z (1), body length (2), all big-endian, then the body: UTF-8
// JSON, or its zlib stream (RFC 1950) when z is 1. Over WebSocket each binary message carries exactly
// one frame ("WebSocket").

/** Function codes of version 2 (docs/PROTOCOL.md "Messages", "Version 2"). */
export const Code = Object.freeze({
  login: 0x0001, loginAccepted: 0x0002, direct: 0x0010, broadcast: 0x0011, delivery: 0x0012,
  presence: 0x0013, stored: 0x0014, received: 0x0015, receipt: 0x0016, historyRequest: 0x0017,
  history: 0x0018, who: 0x0019, onlineUsers: 0x001a, presenceChanges: 0x001b, heartbeat: 0x0020,
  heartbeatAck: 0x0021, error: 0x00f0,
});

export const VERSION = 2;
export const HEADER_BYTES = 7;
/** Bodies longer than this are sent compressed ("Senders compress bodies longer than 512 bytes"). */
export const COMPRESS_ABOVE = 512;
/** The most a body may hold, decompressed (64 KiB). */
export const MAX_BODY = 65536;
/** The most a body may take on the wire: the 16-bit length field. */
const MAX_WIRE_BODY = 65535;

/** A frame that breaks the protocol: the connection is ended. */
export class ProtocolError extends Error {}

/** Reads a whole stream of `Uint8Array` chunks, refusing more than `limit` bytes. */
async function readAll(stream, limit) {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      reader.cancel().catch(() => {});
      throw new ProtocolError(`a body decompresses to more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** `bytes` through a (De)CompressionStream of `format` ('deflate' is zlib, RFC 1950). */
function transform(bytes, stream, limit) {
  const writer = stream.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  return readAll(stream.readable, limit);
}

/**
 * The frame for `code` with `body` (an object, sent as JSON), version 2, as one ArrayBuffer.
 * Bodies over 512 bytes are compressed.
 */
export async function encodeFrame(code, body) {
  let payload = new TextEncoder().encode(JSON.stringify(body));
  let z = 0;
  if (payload.byteLength > MAX_BODY) throw new RangeError(`a body of ${payload.byteLength} bytes is over 64 KiB`);
  if (payload.byteLength > COMPRESS_ABOVE) {
    payload = await transform(payload, new CompressionStream('deflate'), MAX_BODY + 1024);
    z = 1;
  }
  if (payload.byteLength > MAX_WIRE_BODY) throw new RangeError('the body does not fit a frame');
  const frame = new Uint8Array(HEADER_BYTES + payload.byteLength);
  const view = new DataView(frame.buffer);
  view.setUint16(0, VERSION);
  view.setUint16(2, code);
  view.setUint8(4, z);
  view.setUint16(5, payload.byteLength);
  frame.set(payload, HEADER_BYTES);
  return frame.buffer;
}

/**
 * The one frame in a WebSocket message (`buffer`, an ArrayBuffer): `{code, body}`, body parsed.
 * @throws ProtocolError when it is not exactly one version 2 frame with a JSON object body.
 */
export async function decodeFrame(buffer) {
  if (buffer.byteLength < HEADER_BYTES) throw new ProtocolError(`a message of ${buffer.byteLength} bytes is no frame`);
  const view = new DataView(buffer);
  const version = view.getUint16(0);
  const code = view.getUint16(2);
  const z = view.getUint8(4);
  const length = view.getUint16(5);
  if (version !== VERSION) throw new ProtocolError(`version ${version} is not 2`);
  if (z > 1) throw new ProtocolError(`compressed flag ${z} is not 0 or 1`);
  if (buffer.byteLength !== HEADER_BYTES + length) {
    throw new ProtocolError(`the header says ${length} bytes of body, the message holds ${buffer.byteLength - HEADER_BYTES}`);
  }
  let payload = new Uint8Array(buffer, HEADER_BYTES, length);
  if (z === 1) payload = await transform(payload, new DecompressionStream('deflate'), MAX_BODY);
  let body;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch (error) {
    throw new ProtocolError(`the body of code ${code} is not UTF-8 JSON: ${error.message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ProtocolError(`the body of code ${code} is not a JSON object`);
  }
  return { code, body };
}

/** Conversation id of the room, and of the direct conversation of two names (code-point order). */
export const ROOM = 'room';
export function directConversation(a, b) {
  const [first, second] = compareCodePoints(a, b) <= 0 ? [a, b] : [b, a];
  return `direct:${first} ${second}`;
}

/** The other user of direct conversation `conversation` for `me` (itself for a conversation with oneself). */
export function otherName(conversation, me) {
  if (!conversation.startsWith('direct:')) return null;
  const [a, b] = conversation.slice('direct:'.length).split(' ');
  return a === me ? b : a;
}

/** Orders strings by Unicode code points (JavaScript's `<` compares UTF-16 code units). */
export function compareCodePoints(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

/** 32 lowercase hexadecimal digits: 128 random bits, a client instance ("Numbers, ids and conversations"). */
export function newClientInstance() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
