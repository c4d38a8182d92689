import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPSocket {
    /// Closes the connection (or stops listening, or abandons a connect) now. Queued reads and writes
    /// are discarded (and reported through ``TCPSocketDelegate/socketWillDisconnect(_:unreadData:unsentWriteTags:)``).
    /// ``TCPSocketDelegate/socketDidDisconnect(_:withError:)`` follows with a `nil` error unless the
    /// socket was already disconnected. From any thread, a `connect` or `accept` right after it works, as
    /// after GCDAsyncSocket's synchronous `disconnect` (they wait for the loop to have closed it).
    public func disconnect() {
        onLoop { [self] in close(error: nil) }
    }

    /// Disconnects once every queued read has completed (GCDAsyncSocket's `disconnectAfterReading`).
    /// From now on new reads and writes are rejected; pending writes do not delay the disconnect.
    public func disconnectAfterReading() {
        onLoop { [self] in endAfter(reads: true, writes: false) }
    }

    /// Disconnects once every queued write has been sent (GCDAsyncSocket's `disconnectAfterWriting`).
    /// From now on new reads and writes are rejected; reads already queued may still complete while
    /// the writes go out, but do not delay the disconnect.
    public func disconnectAfterWriting() {
        onLoop { [self] in endAfter(reads: false, writes: true) }
    }

    /// Disconnects once every queued read has completed and every queued write has been sent
    /// (GCDAsyncSocket's `disconnectAfterReadingAndWriting`). New reads and writes are rejected.
    public func disconnectAfterReadingAndWriting() {
        onLoop { [self] in endAfter(reads: true, writes: true) }
    }

    private func endAfter(reads: Bool, writes: Bool) {
        guard let connection = lifecycle.connection else { return }
        if reads { connection.endAfterReads = true }
        if writes { connection.endAfterWrites = true }
        closeIfFinished()
    }

    /// Closes this side's write direction (`shutdown(SHUT_WR)`, a FIN to the peer) once the queued
    /// writes are sent, keeping the read direction open: a half-close. New writes are rejected. When
    /// the peer's side is closed too (``autoDisconnectOnClosedReadStream`` off and
    /// ``TCPSocketDelegate/socketDidCloseReadStream(_:)`` reported), the socket disconnects with a
    /// `nil` error.
    public func closeWriteStreamAfterWriting() {
        onLoop { [self] in
            guard let connection = lifecycle.connection, !connection.writeStreamClosing else { return }
            connection.writeStreamClosing = true
            if isCurrent(connection) && connection.writeQueue.isEmpty { shutdownWriteStream(connection) }
        }
    }

    func shutdownWriteStream(_ connection: ConnectionState) {
        sendCloseNotify(connection)
        connection.writeStreamClosed = true
        eventLoop.io.shutdown(connection.fd, Int32(SHUT_WR))
        if connection.readStreamClosed { close(error: nil) }
    }

    /// Disconnects when a disconnect-after request has been met: the reads, the writes, or both, are
    /// done. Loop thread only.
    func closeIfFinished() {
        eventLoop.assertInEventLoop()
        guard let connection = lifecycle.connection, connection.endAfterReads || connection.endAfterWrites else { return }
        let readsDone = connection.readQueue.isEmpty
        let writesDone = connection.writeQueue.isEmpty && (connection.tls?.stage?.pendingCiphertext.isEmpty ?? true)
        let finished =
            switch (connection.endAfterReads, connection.endAfterWrites) {
            case (true, true): readsDone && writesDone
            case (true, false): readsDone
            default: writesDone
            }
        if finished { close(error: nil) }
    }

    /// Ends the connection, the connect attempt or the listening, and reports `error` (nil = on purpose):
    /// one transition to ``Lifecycle/closed(_:leftover:)``, which drops what the stage owned. Does
    /// nothing when there is nothing to end. Loop thread only.
    func close(error: SocketError?) {
        eventLoop.assertInEventLoop()
        let connection: ConnectionState?
        let wasConnected = state == .connected
        switch lifecycle {
        case .idle, .closed:
            return
        case .listening(let acceptor):
            acceptor.close()
            connection = nil
        case .connecting(let connecting, let attempt):
            attempt.cancel()
            connection = connecting
        case .connected(let connected):
            connection = connected
        }
        connectGeneration &+= 1
        // Both directions closed after a half-close is the peer's end as much as ours.
        let ending = error ?? (connection?.readStreamClosed == true ? .closedByPeer : .connectionClosed)
        // After an error, the bytes received and not read stay readable by handler reads; never after
        // a close on purpose.
        lifecycle = .closed(ending, leftover: ending == .connectionClosed ? nil : connection)
        queuedWriteBytesMirror.store(0, ordering: .relaxed)
        shared.withLock {
            $0.state = .disconnected
            $0.localAddress = nil
            $0.remoteAddress = nil
            $0.isSecure = false
        }
        guard let connection else {
            emit(.disconnected(error))
            return
        }
        connection.readTimeout.cancel()
        connection.writeTimeout.cancel()
        endTLS(connection)
        // Ours on a close on purpose, and in answer to the peer's (RFC 8446 §6.1): a session whose
        // connection ended without it cannot be resumed (OpenSSL marks it not resumable).
        if error == nil || error == .closedByPeer { sendCloseNotify(connection) }
        if connection.fd >= 0 {
            eventLoop.deregister(connection.fd)
            eventLoop.io.close(connection.fd)
            connection.fd = -1
        }
        let unsent = connection.writeQueue.removeAll().filter(\.reports).map(\.tag)
        connection.stagedWrites.reset()
        let unfinishedReads = connection.readQueue.removeAll()
        for request in unfinishedReads {
            if case .handler(_, let handler) = request.completion { handler(.failure(ending)) }
        }
        guard !connection.isMatching else {
            // A consumer's frame handler closed the socket: the frames before it are taken, but the
            // buffer does not say so until the consumer returns its count. Report the end then.
            connection.deferredEnd = DeferredEnd(error: error, unsentTags: unsent, wasConnected: wasConnected)
            return
        }
        reportEnd(connection, error: error, unsentTags: unsent, wasConnected: wasConnected)
    }

    /// Tells the delegate what the ended `connection` left unread and unsent, then that it ended.
    func reportEnd(_ connection: ConnectionState, error: SocketError?, unsentTags: [Int], wasConnected: Bool) {
        let unread = connection.buffer.withUnsafeReadableBytes { Data($0) }
        if wasConnected && (!unread.isEmpty || !unsentTags.isEmpty) {
            emit(.willDisconnect(unread: unread, unsentTags: unsentTags))
        }
        emit(.disconnected(error))
    }
}
