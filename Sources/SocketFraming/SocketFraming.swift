// SocketFraming: codecs over bytes.
