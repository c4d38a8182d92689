import CAsyncSocketShims
import Foundation

extension TCPSocket {
    /// Queues `data` to be sent after every write queued before it. Writes may be queued while the
    /// socket is still connecting; they go out once it is connected. Completes with
    /// ``TCPSocketDelegate/socket(_:didWriteDataWithTag:)`` once every byte is with the kernel.
    /// Empty data is ignored, as in GCDAsyncSocket. Writes to a socket that is not connecting or
    /// connected, or after ``disconnectAfterWriting()``, are ignored.
    ///
    /// - Parameters:
    ///   - timeout: seconds from when this write becomes the current one; negative means none. On
    ///     expiry the socket disconnects with ``SocketError/writeTimeout(tag:)``.
    ///   - tag: handed back in the callback, never sent.
    public func write(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty else { return }
        onLoop { [self] in
            guard (state == .connecting || state == .connected) && !disconnectAfterWritingRequested else { return }
            nextRequestID &+= 1
            var request = WriteRequest(data: data, timeout: timeout, tag: tag)
            request.id = nextRequestID
            writeQueue.append(request)
            adjustQueuedWriteBytes(by: data.count)
            guard state == .connected else { return }
            armWriteTimer()
            scheduleFlush()
        }
    }

    /// Keeps the queued byte count and reports crossing the watermarks. Loop thread only.
    private func adjustQueuedWriteBytes(by delta: Int) {
        queuedWriteBytesOnLoop += delta
        queuedWriteBytesMirror.store(queuedWriteBytesOnLoop, ordering: .relaxed)
        let queued = queuedWriteBytesOnLoop
        if !isAboveWriteHighWatermark && queued > writeHighWatermarkOnLoop {
            isAboveWriteHighWatermark = true
            notify { $0.socket(self, writeQueueDidExceedHighWatermark: queued) }
        } else if isAboveWriteHighWatermark && queued <= writeLowWatermarkOnLoop {
            isAboveWriteHighWatermark = false
            notify { $0.socket(self, writeQueueDidFallToLowWatermark: queued) }
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
    /// completed ones. Loop thread only.
    func flushWrites() {
        guard state == .connected, !writeBlocked else { return }
        var failure: SocketError?
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
                } else {
                    writeQueue.updateFirst { $0.sent += left }
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
            notify { $0.socket(self, didWriteDataWithTag: tag) }
        }
        completedWrites.removeAll(keepingCapacity: true)
        if let failure {
            close(error: failure)
            return
        }
        guard state == .connected else { return }
        armWriteTimer()
        updateInterest()
        if writeQueue.isEmpty && disconnectAfterWritingRequested { close(error: nil) }
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

    // MARK: Write timeouts

    /// Starts the timeout of the current write if it has one and it is not running yet.
    func armWriteTimer() {
        let head = writeQueue.first
        writeTimeout.follow(head?.id, timeout: head?.timeout ?? -1) {
            let (id, tag) = (head?.id, head?.tag ?? 0)
            return eventLoop.scheduleTask(in: .seconds(head?.timeout ?? 0)) { [self] in
                guard state == .connected, writeQueue.first?.id == id else { return }
                close(error: .writeTimeout(tag: tag))
            }
        }
    }
}
