// SocketFraming: pure codecs that cut a TCP byte stream back into the messages that were sent.
//
// TCP delivers bytes, not messages: two messages can arrive glued together ("sticky packets", 粘包), one
// message can arrive in pieces (half packets, 少包), or both at once (MISSION.md, M3). This module turns
// bytes into frames and frames into bytes, with no socket in sight:
//
// - `FrameBuffer` holds received bytes; a `FrameDecoder` peels complete frames off its front and a
//   `FrameReader` pairs the two into the "receive buffer that peels off every complete frame".
// - `LengthFieldBasedFrameDecoder` / `LengthFieldPrepender`: Netty's configurable length field (M3.1).
// - `SevenByteHeaderFrameDecoder` / `SevenByteHeaderFrameEncoder`: version, function code, compressed flag,
//   body length (M3.4).
// - `Zlib`: zlib, gzip and raw deflate with a bounded output, for compressed bodies.
//
// Every codec is a value type; bad input is a `FramingError` for that connection, never a trap, and no
// buffer grows beyond a configured maximum because of what a peer claims.
