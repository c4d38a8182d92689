// SocketFraming: pure codecs that cut a TCP byte stream back into the messages that were sent.
//
// TCP delivers bytes, not messages: two messages can arrive glued together ("sticky packets", 粘包), one
// message can arrive in pieces (half packets, 少包), or both at once (MISSION.md, M3). This module turns
// bytes into frames and frames into bytes, with no socket in sight:
//
// - `FrameBuffer` holds received bytes; a `FrameDecoder` peels complete frames off its front and a
//   `FrameReader` pairs the two into the "receive buffer that peels off every complete frame".
// - Framings, each an encoder and an incremental decoder:
//   - `LengthFieldBasedFrameDecoder` / `LengthFieldPrepender`: Netty's configurable length field (M3.1);
//   - `DelimiterBasedFrameDecoder` / `DelimiterFrameEncoder`: CRLF, LF or any byte sequences (M3.2);
//   - `JSONHeaderFrameDecoder` / `JSONHeaderFrameEncoder`: `{"size":N}` CRLF, then N bytes (M3.3);
//   - `SevenByteHeaderFrameDecoder` / `SevenByteHeaderFrameEncoder`: version, function code, compressed
//     flag, body length (M3.4);
//   - `EightByteHeaderFrameDecoder` / `EightByteHeaderFrameEncoder`: service id, body length (M3.5);
//   - `FixedLengthFrameDecoder` / `FixedLengthFrameEncoder` (M3.6).
// - `BodyTransform` changes bodies between message and frame: `CompressionTransform` (zlib, gzip, raw
//   deflate through `Zlib`, with a bound on the inflated size), an application's cipher, or both chained;
//   the header then counts the transformed body, as the articles require. `transformed(by:)` adds one to
//   any framing of `Data` frames.
// - `BinaryEncoder` / `BinaryDecoder`: `Codable` message models as big-endian fields in declaration order
//   (M3.7; docs/BINARY-ENCODING.md).
//
// Every codec is a value type; bad input is a `FramingError` (`BinaryCodingError` for message models) for
// that connection, never a trap, and no buffer grows beyond a configured maximum because of what a peer
// claims. Every decoder's `maximumFrameLength` is the most bytes one frame may occupy on the wire, header,
// length field or delimiter included (docs/FRAMING.md): the bound to give a socket read. Decoding is
// linear in the bytes received. The decoders are fuzzed (fuzz/, scripts/fuzz.sh).
