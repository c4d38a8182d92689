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
    /// socket was already disconnected.
    public func disconnect() {
        onLoop { [self] in close(error: nil) }
    }

    /// Disconnects once every queued read has completed (GCDAsyncSocket's `disconnectAfterReading`).
    /// From now on new reads and writes are rejected; pending writes do not delay the disconnect.
    public func disconnectAfterReading() {
        onLoop { [self] in
            guard state == .connecting || state == .connected else { return }
            endAfterReads = true
            closeIfFinished()
        }
    }

    /// Disconnects once every queued write has been sent (GCDAsyncSocket's `disconnectAfterWriting`).
    /// From now on new reads and writes are rejected; reads already queued may still complete while
    /// the writes go out, but do not delay the disconnect.
    public func disconnectAfterWriting() {
        onLoop { [self] in
            guard state == .connecting || state == .connected else { return }
            endAfterWrites = true
            closeIfFinished()
        }
    }

    /// Disconnects once every queued read has completed and every queued write has been sent
    /// (GCDAsyncSocket's `disconnectAfterReadingAndWriting`). New reads and writes are rejected.
    public func disconnectAfterReadingAndWriting() {
        onLoop { [self] in
            guard state == .connecting || state == .connected else { return }
            endAfterReads = true
            endAfterWrites = true
            closeIfFinished()
        }
    }

    /// Closes this side's write direction (`shutdown(SHUT_WR)`, a FIN to the peer) once the queued
    /// writes are sent, keeping the read direction open: a half-close. New writes are rejected. When
    /// the peer's side is closed too (``autoDisconnectOnClosedReadStream`` off and
    /// ``TCPSocketDelegate/socketDidCloseReadStream(_:)`` reported), the socket disconnects with a
    /// `nil` error.
    public func closeWriteStreamAfterWriting() {
        onLoop { [self] in
            guard state == .connecting || state == .connected, !writeStreamClosing else { return }
            writeStreamClosing = true
            if state == .connected && writeQueue.isEmpty { shutdownWriteStream() }
        }
    }

    func shutdownWriteStream() {
        writeStreamClosed = true
        eventLoop.io.shutdown(fd, Int32(SHUT_WR))
        if readStreamClosed { close(error: nil) }
    }

    /// Disconnects when a disconnect-after request has been met: the reads, the writes, or both, are
    /// done. Loop thread only.
    func closeIfFinished() {
        guard endAfterReads || endAfterWrites, state == .connecting || state == .connected else { return }
        let readsDone = readQueue.isEmpty
        let writesDone = writeQueue.isEmpty
        let finished = switch (endAfterReads, endAfterWrites) {
        case (true, true): readsDone && writesDone
        case (true, false): readsDone
        default: writesDone
        }
        if finished { close(error: nil) }
    }

    /// Ends the connection, the connect attempt or the listening, and reports `error` (nil = on purpose).
    /// Does nothing when there is nothing to end. Loop thread only.
    func close(error: SocketError?) {
        guard state != .idle && state != .disconnected else { return }
        let wasConnected = state == .connected
        connectGeneration &+= 1
        connectTimer?.cancel()
        connectTimer = nil
        connection?.cancel()
        connection = nil
        readTimeout.cancel()
        writeTimeout.cancel()
        if fd >= 0 {
            eventLoop.deregister(fd)
            eventLoop.io.close(fd)
            fd = -1
        }
        for listener in listeners { listener.close() }
        listeners = []
        interest = []
        let unread = buffer.withUnsafeReadableBytes { Data($0) }
        let unsent = writeQueue.removeAll().map(\.tag)
        stagedWrites.reset()
        let unfinishedReads = readQueue.removeAll()
        // Bytes received and not read stay readable by handler reads after an error, never after a
        // close on purpose (a consumer in the middle of using them resets them when it is done).
        // Both directions closed after a half-close is the peer's end as much as ours.
        let ending = error ?? (readStreamClosed ? .closedByPeer : .connectionClosed)
        endError = ending
        if ending == .connectionClosed {
            if isProcessingReads { bufferResetPending = true } else { buffer.reset() }
        }
        queuedWriteBytesOnLoop = 0
        queuedWriteBytesMirror.store(0, ordering: .relaxed)
        isAboveWriteHighWatermark = false
        readEOF = false
        readStreamClosed = false
        writeBlocked = false
        writeStreamClosing = false
        writeStreamClosed = false
        endAfterReads = false
        endAfterWrites = false
        state = .disconnected
        shared.withLock {
            $0.state = .disconnected
            $0.localAddress = nil
            $0.remoteAddress = nil
        }
        if wasConnected && (!unread.isEmpty || !unsent.isEmpty) {
            emit(.willDisconnect(unread: unread, unsentTags: unsent))
        }
        for request in unfinishedReads {
            if case .handler(_, let handler) = request.completion { handler(.failure(ending)) }
        }
        emit(.disconnected(error))
    }

    /// A handler read queued after the connection ended: the bytes it left unread may still satisfy
    /// it; otherwise it fails with the error the connection ended with. Loop thread only.
    func readAfterEnd(_ request: ReadRequest) {
        guard case .handler(_, let handler) = request.completion else { return }
        let ending = endError ?? .notConnected
        if !buffer.isEmpty {
            let match = buffer.withUnsafeReadableBytes { request.match($0) }
            if case .complete(let length) = match {
                let data = buffer.withUnsafeReadableBytes { bytes in
                    if case .consuming = request.kind { return Data() }
                    return Data(UnsafeRawBufferPointer(rebasing: bytes[..<length]))
                }
                buffer.consume(length)
                handler(.success(data))
                return
            }
            if case .consumed(let length) = match { buffer.consume(length) }
        }
        handler(.failure(ending))
    }
}
