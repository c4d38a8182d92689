import Foundation

extension TCPSocket {
    // MARK: Reading from the kernel (loop thread)

    /// The most bytes the socket will buffer right now: the general limit, or the current read's
    /// length or maximum length when that is larger.
    var readBufferLimit: Int {
        switch readQueue.first?.kind {
        case .toLength(let length)?,
             .toData(_, let length)?, .toFrameEnd(_, let length)?, .toLastFrameEnd(_, let length)?,
             .decodedFrame(_, let length)?:
            return max(length, TCPSocket.maxBufferedReadBytes)
        case .available?, nil:
            return TCPSocket.maxBufferedReadBytes
        }
    }

    /// One `read(2)` into the loop's shared buffer, then as many queued reads as the bytes satisfy.
    func readFromSocket() {
        let scratch = eventLoop.scratch
        let inPlace = buffer.count >= ReadBuffer.readInPlaceThreshold && !isProcessingReads
        let result: Posix.IOResult
        do {
            if inPlace {
                // Part of a large frame is buffered already: read the rest in after it, saving a copy.
                result = try Posix.read(fd, into: buffer.room(upTo: scratch.count))
                if case .processed(let count) = result { buffer.didAppend(count) }
            } else {
                result = try Posix.read(fd, into: scratch)
            }
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
            processReads(incoming: inPlace ? nil : UnsafeRawBufferPointer(rebasing: scratch[..<count]))
        }
    }

    /// Completes queued reads from the buffered bytes and `incoming` (bytes just read into the loop's
    /// scratch buffer, which must not outlive this call), delivers them, reports progress and the end
    /// of the read stream, and then flushes writes the delegate queued meanwhile. Loop thread only; does
    /// nothing when already running.
    func processReads(incoming: UnsafeRawBufferPointer? = nil) {
        guard !isProcessingReads else {
            if let incoming { buffer.append(incoming) }
            return
        }
        isProcessingReads = true
        var completed = eventLoop.spareEventArrays.borrow()
        defer { eventLoop.spareEventArrays.giveBack(&completed) }
        var failure: SocketError?
        if let incoming {
            if buffer.isEmpty {
                // Fast path: satisfy reads straight from the scratch buffer; keep only the leftover.
                let consumed = satisfyReads(from: incoming, into: &completed, failure: &failure)
                if consumed < incoming.count { buffer.append(UnsafeRawBufferPointer(rebasing: incoming[consumed...])) }
            } else {
                buffer.append(incoming)
            }
        }
        while state == .connected {
            if failure == nil && !buffer.isEmpty && !readQueue.isEmpty {
                let consumed = buffer.withUnsafeReadableBytes { satisfyReads(from: $0, into: &completed, failure: &failure) }
                buffer.consume(consumed)
            }
            if completed.isEmpty { break }
            // Reads completed before a failure are delivered first. The delegate may queue more reads
            // meanwhile (on the loop thread); the loop goes round for them.
            deliver(&completed)
        }
        isProcessingReads = false

        if let failure {
            close(error: failure)
            return
        }
        guard state == .connected else { return }
        reportReadProgress()
        if readEOF {
            readStreamEnded()
            guard state == .connected else { return }
        }
        if let head = readQueue.first, head.isUnbounded, buffer.count >= readBufferLimit {
            close(error: .readMaxedOut(maxLength: readBufferLimit))
            return
        }
        armReadTimer()
        updateInterest()
        if needsFlush {
            needsFlush = false
            flushWrites()
        }
        closeIfFinished()
    }

    /// Takes every read that `unread` completes off the queue into `completed`, in order, and
    /// returns how many bytes they took. Sets `failure` when a read maxes out.
    private func satisfyReads(from unread: UnsafeRawBufferPointer, into completed: inout [DelegateEvent], failure: inout SocketError?) -> Int {
        var consumed = 0
        while !readQueue.isEmpty {
            let rest = UnsafeRawBufferPointer(rebasing: unread[consumed...])
            switch readQueue.updateFirst({ $0.match(rest) }) {
            case .complete(let length):
                let request = readQueue.removeFirst()
                let bytes = UnsafeRawBufferPointer(rebasing: rest[..<length])
                if let target = request.buffer { TCPSocket.write(bytes, into: target, at: request.bufferOffset) }
                completed.append(.read(Data(bytes), tag: request.tag))
                consumed += length
            case .decoded(let length, let frame):
                let request = readQueue.removeFirst()
                completed.append(.readFrame(frame, tag: request.tag))
                consumed += length
            case .skip(let length):
                consumed += length
            case .needMore(let scanned):
                readQueue.updateFirst { $0.scanned = scanned }
                return consumed
            case .maxedOut(let maxLength):
                failure = .readMaxedOut(maxLength: maxLength)
                return consumed
            case .invalid(let reason):
                failure = .badFrame(reason)
                return consumed
            }
        }
        return consumed
    }

    /// Writes `bytes` into a caller's buffer at `offset`, growing it as needed, as GCDAsyncSocket does.
    private static func write(_ bytes: UnsafeRawBufferPointer, into target: NSMutableData, at offset: Int) {
        let replaced = max(0, min(bytes.count, target.length - offset))
        guard let base = bytes.baseAddress else { return }
        target.replaceBytes(in: NSRange(location: offset, length: replaced), withBytes: base, length: bytes.count)
    }

    private func deliver(_ completed: inout [DelegateEvent]) {
        for event in completed {
            // A delegate on the loop thread may disconnect from within the callback.
            guard state == .connected else { break }
            emit(event)
        }
        completed.removeAll(keepingCapacity: true)
    }

    /// Tells the delegate how many more bytes the unfinished current read has received.
    private func reportReadProgress() {
        guard let head = readQueue.first else { return }
        let done = head.bytesDone(unread: buffer.count)
        guard done > head.reportedBytes else { return }
        let delta = UInt(done - head.reportedBytes)
        let tag = head.tag
        readQueue.updateFirst { $0.reportedBytes = done }
        emit(.readPartial(delta, tag: tag))
    }

    /// The peer sent FIN and the reads have taken what they could: disconnect, or (half-close mode)
    /// report the closed read stream once nothing buffered can complete a read.
    private func readStreamEnded() {
        let stuck = !readQueue.isEmpty  // processReads left these unsatisfied: they never will be
        guard buffer.isEmpty || stuck else { return }  // wait for the delegate's next read
        guard !loopOptions.autoDisconnectOnClosedReadStream else {
            close(error: .closedByPeer)
            return
        }
        if stuck {
            readTimeout.cancel()
            for request in readQueue.removeAll() { rejectRead(tag: request.tag, .closedByPeer) }
        }
        guard !readStreamClosed else { return }
        readStreamClosed = true
        emit(.readStreamClosed)
        if writeStreamClosed { close(error: nil) }
    }
}
