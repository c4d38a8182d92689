import CAsyncSocketShims
import Foundation

extension TCPSocket {
    /// Queues `data` to be sent after every write queued before it. Writes may be queued while the
    /// socket is still connecting; they go out once it is connected. Completes with
    /// ``TCPSocketDelegate/socket(_:didWriteDataWithTag:)`` once every byte is with the kernel. Empty
    /// data, and writes while the socket is not connecting or connected, disconnecting, or closing its
    /// write stream, are rejected through ``TCPSocketDelegate/socket(_:didRejectWriteWithTag:error:)``.
    ///
    /// - Parameters:
    ///   - data: the bytes to send, as they are (no framing is added).
    ///   - timeout: seconds from when this write becomes the current one; negative means none. On
    ///     expiry the delegate may extend it; otherwise the socket disconnects with
    ///     ``SocketError/writeTimeout(tag:)``.
    ///   - tag: handed back in the callback, never sent.
    public func write(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty else {
            rejectWrite(tag: tag, .badParam("a write needs at least one byte"))
            return
        }
        if eventLoop.inEventLoop {
            queueWrite(data, timeout: timeout, tag: tag)
        } else {
            eventLoop.execute { [self] in queueWrite(data, timeout: timeout, tag: tag) }
        }
    }

    /// Queues a copy of `bytes` to be sent after every write queued before it, as
    /// ``write(_:withTimeout:tag:)`` does: for bytes borrowed only for the call, such as a frame handed
    /// to a FramedSocket handler. On the socket's loop thread the bytes are copied into a staging buffer
    /// the socket keeps (no allocation per write once it has grown), and writes staged one after another
    /// go out as one buffer of `sendmsg(2)`; from another thread they are copied into a `Data` first.
    /// Completes, is rejected and times out as ``write(_:withTimeout:tag:)``.
    public func write(copying bytes: UnsafeRawBufferPointer, withTimeout timeout: TimeInterval, tag: Int) {
        guard !bytes.isEmpty else {
            rejectWrite(tag: tag, .badParam("a write needs at least one byte"))
            return
        }
        guard eventLoop.inEventLoop else {
            write(Data(bytes), withTimeout: timeout, tag: tag)
            return
        }
        guard let connection = writableConnection(tag: tag) else { return }
        connection.stagedWrites.append(bytes)
        enqueue(WriteRequest(bytes: .staged(count: bytes.count), timeout: timeout, tag: tag), on: connection)
    }

    /// Stages `header` and then `payload` as one write with no timeout, as ``write(copying:withTimeout:tag:)``
    /// does with one buffer: for a layer above that frames its own messages (a WebSocket frame's header
    /// and payload: one request and at most one delegate call, not two of each). `payload` may be empty.
    /// With `tag` nil the delegate never hears of the write: no
    /// ``TCPSocketDelegate/socket(_:didWriteDataWithTag:)``, no progress, and on a socket that takes no
    /// writes now no rejection (the write is dropped); such writes queued one after another are one
    /// request. Loop thread only.
    package func write(copying header: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer, tag: Int?) {
        eventLoop.assertInEventLoop()
        let count = header.count + payload.count
        guard count > 0 else { return rejectWrite(tag: tag, .badParam("a write needs at least one byte")) }
        guard let connection = writableConnection(tag: tag) else { return }
        connection.stagedWrites.append(header, payload)
        // Right behind an unreported staged write (and no startTLS waiting): part of that one request.
        if tag == nil, connection.tls?.isSecured ?? true, connection.writeQueue.updateLast({ $0.absorbStaged(count) }) == true {
            adjustQueuedWriteBytes(connection, by: count)
            if isCurrent(connection) { scheduleFlush(connection) }
            return
        }
        var request = WriteRequest(bytes: .staged(count: count), timeout: -1, tag: tag ?? 0)
        request.reports = tag != nil
        enqueue(request, on: connection)
    }

    /// Queues a write or rejects it. Loop thread only.
    private func queueWrite(_ data: Data, timeout: TimeInterval, tag: Int) {
        guard let connection = writableConnection(tag: tag) else { return }
        enqueue(WriteRequest(bytes: .data(data), timeout: timeout, tag: tag), on: connection)
    }

    private func enqueue(_ request: WriteRequest, on connection: ConnectionState) {
        eventLoop.assertInEventLoop()
        nextRequestID &+= 1
        var request = request
        request.id = nextRequestID
        connection.writeQueue.append(request)
        adjustQueuedWriteBytes(connection, by: request.count)
        guard isCurrent(connection) else { return }
        armWriteTimer(connection)
        scheduleFlush(connection)
    }

    /// The connection a write may be queued on now, or nil after rejecting the write with the reason (not
    /// reported for an unreported write, `tag` nil). Loop thread only.
    private func writableConnection(tag: Int?) -> ConnectionState? {
        guard let connection = lifecycle.connection else {
            rejectWrite(tag: tag, .notConnected)
            return nil
        }
        if connection.endAfterReads || connection.endAfterWrites {
            rejectWrite(tag: tag, .disconnecting)
            return nil
        }
        if connection.writeStreamClosing {
            rejectWrite(tag: tag, .writeStreamClosed)
            return nil
        }
        return connection
    }

    /// Tells the delegate a write was refused; nothing for an unreported write (`tag` nil).
    private func rejectWrite(tag: Int?, _ error: SocketError) {
        guard let tag else { return }
        emit(.rejectedWrite(tag: tag, error))
    }

    /// Keeps the queued byte count and reports crossing the watermarks. Loop thread only.
    private func adjustQueuedWriteBytes(_ connection: ConnectionState, by delta: Int) {
        connection.queuedWriteBytes += delta
        let queued = connection.queuedWriteBytes
        queuedWriteBytesMirror.store(queued, ordering: .relaxed)
        if !connection.isAboveWriteHighWatermark && queued > loopOptions.options.writeHighWatermark {
            connection.isAboveWriteHighWatermark = true
            emit(.highWatermark(queued))
        } else if connection.isAboveWriteHighWatermark && queued <= loopOptions.options.writeLowWatermark {
            connection.isAboveWriteHighWatermark = false
            emit(.lowWatermark(queued))
        }
    }

    /// Flushes soon: at the end of the current read processing, or as a loop task, so writes queued
    /// together go out together in one `sendmsg(2)`.
    func scheduleFlush(_ connection: ConnectionState) {
        if connection.isProcessingReads {
            connection.needsFlush = true
        } else if !connection.flushScheduled {
            connection.flushScheduled = true
            eventLoop.execute { [self] in
                connection.flushScheduled = false
                flushWrites(connection)
            }
        }
    }

    /// The most buffers gathered into one `sendmsg(2)`.
    static let maxIOVecs = 64

    /// Sends queued writes until they are all sent or the kernel's buffer is full, then reports the
    /// completed ones (and the progress of a partly sent one). Loop thread only.
    func flushWrites(_ connection: ConnectionState) {
        eventLoop.assertInEventLoop()
        guard isCurrent(connection), !connection.writeBlocked else { return }
        if let tls = connection.tls, tls.stage != nil {
            // The handshake's or the last records' ciphertext first; no plaintext while handshaking.
            guard flushCiphertext(connection), isCurrent(connection), !tls.isHandshaking else {
                if isCurrent(connection) { closeIfFinished() }
                return
            }
        }
        var failure: SocketError?
        var partial: (bytes: Int, tag: Int)?
        var completedWrites: [Int] = []
        defer { eventLoop.spareTagArrays.giveBack(&completedWrites) }
        sending: while !connection.writeQueue.isEmpty {
            var attempted = 0
            let outcome = withUnsafeTemporaryAllocation(of: iovec.self, capacity: TCPSocket.maxIOVecs) { iovecs in
                gather(connection, iovecs) { buffers, total in
                    attempted = total
                    // Only writes queued after startTLS are left: they wait for the handshake.
                    if buffers == 0 { return Result<Posix.IOResult, SocketError>.success(.processed(0)) }
                    return Result { () throws(SocketError) in
                        let vectors = UnsafeMutableBufferPointer(rebasing: iovecs[..<buffers])
                        if let stage = connection.tls?.stage { return try writeThroughTLS(connection, stage, vectors) }
                        return try eventLoop.io.writev(connection.fd, vectors)
                    }
                }
            }
            let result: Posix.IOResult
            switch outcome {
            case .success(let value): result = value
            case .failure(let error):
                failure = error
                break sending
            }
            guard case .processed(let written) = result else {
                connection.writeBlocked = true
                break
            }
            if attempted == 0 { break }
            adjustQueuedWriteBytes(connection, by: -written)
            var left = written
            while left > 0,
                let head = connection.writeQueue.withFirst({
                    (remaining: $0.remaining, isStaged: $0.isStaged, tag: $0.tag, reports: $0.reports)
                })
            {
                if left >= head.remaining {
                    left -= head.remaining
                    if head.isStaged { connection.stagedWrites.consume(head.remaining) }
                    connection.writeQueue.removeFirst()
                    if head.reports { eventLoop.spareTagArrays.append(head.tag, to: &completedWrites) }
                    partial = nil
                } else {
                    if head.isStaged { connection.stagedWrites.consume(left) }
                    connection.writeQueue.updateFirst { $0.sent += left }
                    partial = head.reports ? (left + (partial?.tag == head.tag ? partial?.bytes ?? 0 : 0), head.tag) : nil
                    left = 0
                }
            }
            if written < attempted {
                // A short write: the kernel's send buffer is full. Wait for writability.
                connection.writeBlocked = true
                break
            }
        }
        // Every staged byte is sent: the staging storage goes, so an idle connection holds none (the
        // next burst allocates it again: one allocation per burst, not per write).
        if connection.stagedWrites.isEmpty { connection.stagedWrites.reset(keepingCapacity: false) }
        for tag in completedWrites {
            guard isCurrent(connection) else { break }
            emit(.wrote(tag: tag))
        }
        if let failure {
            close(error: failure)
            return
        }
        guard isCurrent(connection) else { return }
        if let partial {
            emit(.wrotePartial(UInt(partial.bytes), tag: partial.tag))
        }
        if connection.tls?.barrier != nil {
            startTLSIfBarrierPassed(connection)
            guard isCurrent(connection) else { return }
        }
        armWriteTimer(connection)
        updateInterest(connection)
        if connection.writeQueue.isEmpty && connection.writeStreamClosing && !connection.writeStreamClosed {
            shutdownWriteStream(connection)
        }
        closeIfFinished()
    }

    /// Fills `iovecs` with the unsent bytes of the first queued writes, then calls `body` with the
    /// number of buffers filled and their total byte count while every buffer is still pinned. Staged
    /// writes next to each other share one buffer. Reads the queue in place (a copy of a request
    /// retains and releases its bytes).
    private func gather<R>(
        _ connection: ConnectionState, _ iovecs: UnsafeMutableBufferPointer<iovec>,
        _ body: (_ buffers: Int, _ total: Int) -> R
    ) -> R {
        connection.stagedWrites.withUnsafeReadableBytes { staged in
            gather(connection, request: 0, into: iovecs, filled: 0, stagedOffset: 0, staged: staged, total: 0, body)
        }
    }

    private func gather<R>(
        _ connection: ConnectionState, request first: Int, into iovecs: UnsafeMutableBufferPointer<iovec>, filled: Int,
        stagedOffset: Int, staged: UnsafeRawBufferPointer, total: Int, _ body: (Int, Int) -> R
    ) -> R {
        var (index, filled, stagedOffset, total) = (first, filled, stagedOffset, total)
        let count = connection.writeQueue.count
        // Only a connection whose startTLS has not finished has writes that must wait: plaintext pays one load.
        let tlsPending = connection.tls.map { !$0.isSecured } ?? false
        func waits(_ index: Int) -> Bool {
            tlsPending && waitsForTLS(connection, id: connection.writeQueue.withElement(at: index, { $0.id }))
        }
        // Staged writes need no pinning: a loop. A `Data` is pinned for the rest of the gathering: a call.
        while index < count && filled < iovecs.count {
            guard !waits(index) else { return body(filled, total) }
            guard let remaining = connection.writeQueue.withElement(at: index, { $0.isStaged ? $0.remaining : nil }) else { break }
            // The staged bytes of every staged write before this one come first in the staging buffer.
            let start = staged.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) + stagedOffset }
            if filled > 0, let previous = iovecs[filled - 1].iov_base, let start, previous + iovecs[filled - 1].iov_len == start {
                iovecs[filled - 1].iov_len += remaining
            } else {
                iovecs[filled] = iovec(iov_base: start, iov_len: remaining)
                filled += 1
            }
            stagedOffset += remaining
            total += remaining
            index += 1
        }
        guard index < count, filled < iovecs.count, !waits(index),
            let (data, sent) = connection.writeQueue.withElement(
                at: index,
                { request -> (Data, Int)? in
                    if case .data(let data) = request.bytes { return (data, request.sent) }
                    return nil
                })
        else {
            return body(filled, total)
        }
        return data.withUnsafeBytes { raw in
            let base = raw.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) + sent }
            iovecs[filled] = iovec(iov_base: base, iov_len: raw.count - sent)
            return gather(
                connection, request: index + 1, into: iovecs, filled: filled + 1, stagedOffset: stagedOffset,
                staged: staged, total: total + raw.count - sent, body)
        }
    }
}
