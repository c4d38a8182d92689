// AsyncSocket: event loops and GCDAsyncSocket-style TCP sockets.
