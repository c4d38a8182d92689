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

    /// Queues a write or rejects it. Loop thread only.
    private func queueWrite(_ data: Data, timeout: TimeInterval, tag: Int) {
        if let refusal = writeRefusal {
            rejectWrite(tag: tag, refusal)
            return
        }
        nextRequestID &+= 1
        var request = WriteRequest(data: data, timeout: timeout, tag: tag)
        request.id = nextRequestID
        writeQueue.append(request)
        adjustQueuedWriteBytes(by: data.count)
        guard state == .connected else { return }
        armWriteTimer()
        scheduleFlush()
    }

    /// Why a write cannot be queued now, or nil. Loop thread only.
    private var writeRefusal: SocketError? {
        guard state == .connecting || state == .connected else {
            return .notConnected
        }
        if endAfterReads || endAfterWrites { return .disconnecting }
        if writeStreamClosing { return .writeStreamClosed }
        return nil
    }

    private func rejectWrite(tag: Int, _ error: SocketError) {
        emit(.rejectedWrite(tag: tag, error))
    }

    /// Keeps the queued byte count and reports crossing the watermarks. Loop thread only.
    private func adjustQueuedWriteBytes(by delta: Int) {
        queuedWriteBytesOnLoop += delta
        queuedWriteBytesMirror.store(queuedWriteBytesOnLoop, ordering: .relaxed)
        let queued = queuedWriteBytesOnLoop
        if !isAboveWriteHighWatermark && queued > loopOptions.writeHighWatermark {
            isAboveWriteHighWatermark = true
            emit(.highWatermark(queued))
        } else if isAboveWriteHighWatermark && queued <= loopOptions.writeLowWatermark {
            isAboveWriteHighWatermark = false
            emit(.lowWatermark(queued))
        }
    }

    /// Flushes soon: at the end of the current read processing, or as a loop task, so writes queued
    /// together go out together in one `sendmsg(2)`.
    func scheduleFlush() {
        if isProcessingReads {
            needsFlush = true
        } else if !flushScheduled {
            flushScheduled = true
            eventLoop.execute { [self] in
                flushScheduled = false
                flushWrites()
            }
        }
    }

    /// The most buffers gathered into one `sendmsg(2)`.
    static let maxIOVecs = 64

    /// Sends queued writes until they are all sent or the kernel's buffer is full, then reports the
    /// completed ones (and the progress of a partly sent one). Loop thread only.
    func flushWrites() {
        guard state == .connected, !writeBlocked else { return }
        var failure: SocketError?
        var partial: (bytes: Int, tag: Int)?
        var completedWrites = eventLoop.spareTagArrays.borrow()
        defer { eventLoop.spareTagArrays.giveBack(&completedWrites) }
        sending: while !writeQueue.isEmpty {
            let count = min(writeQueue.count, TCPSocket.maxIOVecs)
            var attempted = 0
            let outcome = withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { iovecs in
                gather(0, count, iovecs) { total in
                    attempted = total
                    return Result { () throws(SocketError) in
                        try Posix.writev(fd, UnsafeMutableBufferPointer(rebasing: iovecs[..<count]))
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
                writeBlocked = true
                break
            }
            adjustQueuedWriteBytes(by: -written)
            var left = written
            while left > 0, let head = writeQueue.first {
                if left >= head.remaining {
                    left -= head.remaining
                    completedWrites.append(writeQueue.removeFirst().tag)
                    partial = nil
                } else {
                    writeQueue.updateFirst { $0.sent += left }
                    partial = (left + (partial?.tag == head.tag ? partial?.bytes ?? 0 : 0), head.tag)
                    left = 0
                }
            }
            if written < attempted {
                // A short write: the kernel's send buffer is full. Wait for writability.
                writeBlocked = true
                break
            }
        }
        for tag in completedWrites {
            guard state == .connected else { break }
            emit(.wrote(tag: tag))
        }
        if let failure {
            close(error: failure)
            return
        }
        guard state == .connected else { return }
        if let partial {
            emit(.wrotePartial(UInt(partial.bytes), tag: partial.tag))
        }
        armWriteTimer()
        updateInterest()
        if writeQueue.isEmpty && writeStreamClosing && !writeStreamClosed { shutdownWriteStream() }
        closeIfFinished()
    }

    /// Fills `iovecs[index..<count]` with the unsent bytes of the queued writes, then calls `body` with
    /// the total byte count while every buffer is still pinned.
    private func gather<R>(
        _ index: Int, _ count: Int, _ iovecs: UnsafeMutableBufferPointer<iovec>,
        total: Int = 0, _ body: (Int) -> R
    ) -> R {
        guard index < count else { return body(total) }
        let request = writeQueue[index]
        return request.data.withUnsafeBytes { raw in
            let base = raw.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) + request.sent }
            iovecs[index] = iovec(iov_base: base, iov_len: request.remaining)
            return gather(index + 1, count, iovecs, total: total + request.remaining, body)
        }
    }
}
