import Foundation

extension TCPSocket {
    // MARK: Queuing reads (GCDAsyncSocket's read methods)

    /// Reads whatever bytes are available (at least one). Completes with
    /// ``TCPSocketDelegate/socket(_:didRead:withTag:)``.
    ///
    /// - Parameters:
    ///   - timeout: seconds from when this read becomes the current one; negative means none. On
    ///     expiry the socket disconnects with ``SocketError/readTimeout(tag:)``.
    ///   - tag: handed back in the callback, never sent.
    public func readData(withTimeout timeout: TimeInterval, tag: Int) {
        enqueueRead(.available(maxLength: 0), timeout: timeout, tag: tag)
    }

    /// Reads whatever bytes are available, at most `maxLength` bytes of them (0 = no limit). The rest
    /// stays buffered for the next read.
    public func readData(withTimeout timeout: TimeInterval, maxLength: UInt, tag: Int) {
        enqueueRead(.available(maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
    }

    /// Reads exactly `length` bytes (GCDAsyncSocket's `readDataToLength:withTimeout:tag:`). A length of
    /// 0 is ignored, as in GCDAsyncSocket.
    public func readData(toLength length: UInt, withTimeout timeout: TimeInterval, tag: Int) {
        guard length > 0 else { return }
        enqueueRead(.toLength(Int(clamping: length)), timeout: timeout, tag: tag)
    }

    /// Reads up to and including the first occurrence of `data`, the delimiter (for example
    /// ``TCPSocket/crlfData``), however the bytes arrive. An empty delimiter is ignored.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        readData(to: data, withTimeout: timeout, maxLength: 0, tag: tag)
    }

    /// Reads up to and including the delimiter `data`, failing when `maxLength` bytes (delimiter
    /// included; 0 = no limit) arrive without it: the socket then disconnects with
    /// ``SocketError/readMaxedOut(maxLength:)``. A message of exactly `maxLength` bytes is accepted.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, maxLength: UInt, tag: Int) {
        guard !data.isEmpty else { return }
        enqueueRead(.toData(delimiter: [UInt8](data), maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
    }

    /// Carriage return and line feed, `"\r\n"` (GCDAsyncSocket's `CRLFData`).
    public static let crlfData = Data([0x0D, 0x0A])
    /// Carriage return, `"\r"` (`CRData`).
    public static let crData = Data([0x0D])
    /// Line feed, `"\n"` (`LFData`).
    public static let lfData = Data([0x0A])
    /// A zero byte (`ZeroData`), as C strings end.
    public static let zeroData = Data([0x00])

    private func enqueueRead(_ kind: ReadRequest.Kind, timeout: TimeInterval, tag: Int) {
        let request = UnsafeTransfer(ReadRequest(kind: kind, timeout: timeout, tag: tag))
        onLoop { [self] in
            guard (state == .connecting || state == .connected) && !disconnectAfterWritingRequested else { return }
            nextRequestID &+= 1
            var queued = request.value
            queued.id = nextRequestID
            readQueue.append(queued)
            if state == .connected { processReads() }
        }
    }

    // MARK: Reading from the kernel (loop thread)

    /// The most bytes the socket will buffer right now: the general limit, or the current read's
    /// length when that is larger.
    var readBufferLimit: Int {
        if case .toLength(let length)? = readQueue.first?.kind { return max(length, TCPSocket.maxBufferedReadBytes) }
        return TCPSocket.maxBufferedReadBytes
    }

    /// One `read(2)` into the loop's shared buffer, then as many queued reads as the bytes satisfy.
    func readFromSocket() {
        let scratch = eventLoop.scratch
        let result: Posix.IOResult
        do {
            result = try Posix.read(fd, into: scratch)
        } catch {
            close(error: error)
            return
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            readEOF = true
            processReads()
        case .processed(let count):
            processReads(incoming: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
        }
    }

    /// Completes queued reads from the buffered bytes and `incoming` (bytes just read into the loop's
    /// scratch buffer, which must not outlive this call), delivers them, and then flushes writes the
    /// delegate queued meanwhile. Loop thread only; does nothing when already running.
    func processReads(incoming: UnsafeRawBufferPointer? = nil) {
        guard !isProcessingReads else {
            if let incoming { buffer.append(incoming) }
            return
        }
        isProcessingReads = true
        var failure: SocketError?
        if let incoming {
            if buffer.isEmpty {
                // Fast path: satisfy reads straight from the scratch buffer; keep only the leftover.
                let consumed = satisfyReads(from: incoming, failure: &failure)
                if consumed < incoming.count { buffer.append(UnsafeRawBufferPointer(rebasing: incoming[consumed...])) }
            } else {
                buffer.append(incoming)
            }
        }
        while state == .connected {
            if failure == nil && !buffer.isEmpty && !readQueue.isEmpty {
                let consumed = buffer.withUnsafeReadableBytes { satisfyReads(from: $0, failure: &failure) }
                buffer.consume(consumed)
            }
            if completedReads.isEmpty { break }
            // Reads completed before a failure are delivered first. The delegate may queue more reads
            // meanwhile (on the loop thread); the loop goes round for them.
            deliverCompletedReads()
        }
        isProcessingReads = false

        if let failure {
            close(error: failure)
            return
        }
        guard state == .connected else { return }
        if readEOF && (buffer.isEmpty || !readQueue.isEmpty) {
            // Nothing left to read, or the current read can never complete.
            close(error: .closedByPeer)
            return
        }
        if let head = readQueue.first, case .toData(_, 0) = head.kind, buffer.count >= readBufferLimit {
            close(error: .readMaxedOut(maxLength: readBufferLimit))
            return
        }
        armReadTimer()
        updateInterest()
        if needsFlush {
            needsFlush = false
            flushWrites()
        }
    }

    /// Takes every read that `unread` completes off the queue into `completedReads`, in order, and
    /// returns how many bytes they took. Sets `failure` when a read maxes out.
    private func satisfyReads(from unread: UnsafeRawBufferPointer, failure: inout SocketError?) -> Int {
        var consumed = 0
        while !readQueue.isEmpty {
            let rest = UnsafeRawBufferPointer(rebasing: unread[consumed...])
            switch readQueue[0].match(rest) {
            case .complete(let length):
                let request = readQueue.removeFirst()
                completedReads.append((Data(UnsafeRawBufferPointer(rebasing: rest[..<length])), request.tag))
                consumed += length
            case .needMore(let scanned):
                readQueue.updateFirst { $0.scanned = scanned }
                return consumed
            case .maxedOut(let maxLength):
                failure = .readMaxedOut(maxLength: maxLength)
                return consumed
            }
        }
        return consumed
    }

    private func deliverCompletedReads() {
        for (data, tag) in completedReads {
            // A delegate on the loop thread may disconnect from within the callback.
            guard state == .connected else { break }
            notify { $0.socket(self, didRead: data, withTag: tag) }
        }
        completedReads.removeAll(keepingCapacity: true)
    }

    // MARK: Read timeouts

    /// Starts the timeout of the current read if it has one and it is not running yet.
    func armReadTimer() {
        let head = readQueue.first
        readTimeout.follow(head?.id, timeout: head?.timeout ?? -1) {
            let (id, tag) = (head?.id, head?.tag ?? 0)
            return eventLoop.scheduleTask(in: .seconds(head?.timeout ?? 0)) { [self] in
                guard state == .connected, readQueue.first?.id == id else { return }
                close(error: .readTimeout(tag: tag))
            }
        }
    }
}
