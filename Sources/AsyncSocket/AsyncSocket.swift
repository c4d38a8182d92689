// AsyncSocket: asynchronous TCP sockets in the model of CocoaAsyncSocket's GCDAsyncSocket.
//
// - `EventLoop` / `EventLoopGroup`: one thread per loop waiting on epoll (Linux; kqueue on Apple
//   platforms) with a wake-up descriptor, a task queue and a timer heap; a group holds one loop per core.
// - `TCPSocket` with `TCPSocketDelegate`: accept, connect, reads queued in order (available bytes, to a
//   length, to a delimiter) and writes queued in order, each with a timeout and a tag; callbacks on a
//   delegate queue, or directly on the loop thread for servers.
// - `SocketAddress`, `Resolver` (getaddrinfo off the loop), `SocketError` (GCDAsyncSocket's error codes
//   with errno), `LockedValue`, and `ManualClock` for tests in virtual time.
//
// All of a socket's state lives on its loop's thread; public methods may be called from any thread and
// hop there. Platform differences live in files named for the platform (`Selector+Epoll.swift`,
// `Selector+Kqueue.swift`).
