import Foundation

extension TCPSocket {
    // MARK: Reading from the kernel (loop thread)

    /// The most bytes `connection` will buffer right now: the general limit, or the current read's
    /// length or maximum length when that is larger.
    func readBufferLimit(_ connection: ConnectionState) -> Int {
        max(connection.readQueue.withFirst { $0.maxLength } ?? 0, TCPSocket.maxBufferedReadBytes)
    }

    /// One `read(2)` into the loop's shared buffer, then as many queued reads as the bytes satisfy.
    func readFromSocket(_ connection: ConnectionState) {
        let scratch = eventLoop.scratch
        if let stage = connection.tls?.stage {
            readCiphertext(connection, stage)
            return
        }
        let inPlace = connection.buffer.count >= ReadBuffer.readInPlaceThreshold && !connection.isProcessingReads
        let result: Posix.IOResult
        do {
            if inPlace {
                // Part of a large frame is buffered already: read the rest in after it, saving a copy.
                let length = ReadBuffer.inPlaceReadLength(unread: connection.buffer.count, maximum: scratch.count)
                result = try eventLoop.io.read(connection.fd, into: connection.buffer.room(upTo: length))
                if case .processed(let count) = result { connection.buffer.didAppend(count) }
            } else {
                result = try eventLoop.io.read(connection.fd, into: scratch)
            }
        } catch {
            close(error: error)
            return
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            connection.readEOF = true
            processReads(connection)
        case .processed(let count):
            processReads(connection, incoming: inPlace ? nil : UnsafeRawBufferPointer(rebasing: scratch[..<count]))
        }
    }

    /// With TLS: one `read(2)` of ciphertext straight into the TLS stage's buffer
    /// (``receivedCiphertext(_:endOfStream:)``), which hands the plaintext to ``processReads(_:incoming:)``.
    private func readCiphertext(_ connection: ConnectionState, _ stage: TLSStage) {
        let result: Posix.IOResult
        do {
            result = try eventLoop.io.read(connection.fd, into: stage.incomingCiphertext.room(upTo: eventLoop.scratch.count))
        } catch {
            close(error: error)
            return
        }
        switch result {
        case .wouldBlock: return
        case .processed(0): receivedCiphertext(connection, endOfStream: true)
        case .processed(let count):
            stage.incomingCiphertext.didAppend(count)
            receivedCiphertext(connection, endOfStream: false)
        }
    }

    /// Completes queued reads from the buffered bytes and `incoming` (bytes just read into the loop's
    /// scratch buffer, which must not outlive this call), delivers them, reports progress and the end
    /// of the read stream, and then flushes writes the delegate queued meanwhile. Loop thread only; does
    /// nothing when already running. A callback that closes the socket ends the connection's lifecycle
    /// stage, but `connection` itself (and its buffer) lives on until this returns.
    func processReads(_ connection: ConnectionState, incoming: UnsafeRawBufferPointer? = nil) {
        eventLoop.assertInEventLoop()
        guard !connection.isProcessingReads else {
            if let incoming { connection.buffer.append(incoming) }
            return
        }
        connection.isProcessingReads = true
        var completed: [DelegateEvent] = []
        defer { eventLoop.spareEventArrays.giveBack(&completed) }
        var failure: SocketError?
        if let incoming {
            if connection.buffer.isEmpty {
                // Fast path: satisfy reads straight from the scratch buffer; keep only the leftover.
                let consumed = satisfyReads(connection, from: incoming, into: &completed, failure: &failure)
                if consumed < incoming.count { connection.buffer.append(UnsafeRawBufferPointer(rebasing: incoming[consumed...])) }
            } else {
                connection.buffer.append(incoming)
            }
        }
        while isCurrent(connection) {
            // A zero-length read at the head completes with nothing buffered too (else it would wait
            // for bytes it does not need, or fail at the peer's FIN).
            if failure == nil, let isEmptyRead = connection.readQueue.withFirst({ $0.isEmptyRead }),
                !connection.buffer.isEmpty || isEmptyRead
            {
                let consumed = connection.buffer.withUnsafeReadableBytes {
                    satisfyReads(connection, from: $0, into: &completed, failure: &failure)
                }
                connection.buffer.consume(consumed)
            }
            if completed.isEmpty { break }
            // Reads completed before a failure are delivered first. The delegate may queue more reads
            // meanwhile (on the loop thread); the loop goes round for them.
            deliver(&completed)
        }
        // Reads completed before a callback closed the socket mid-match (fast path): their handlers run.
        if !completed.isEmpty { deliver(&completed) }
        connection.isProcessingReads = false
        if let end = connection.deferredEnd {
            // The buffer now holds exactly the bytes no read took.
            connection.deferredEnd = nil
            reportEnd(connection, error: end.error, unsentTags: end.unsentTags, wasConnected: end.wasConnected)
            return
        }

        if let failure {
            close(error: failure)
            return
        }
        guard isCurrent(connection) else { return }
        if connection.tls?.barrier != nil {
            startTLSIfBarrierPassed(connection)
            guard isCurrent(connection) else { return }
        }
        reportReadProgress(connection)
        if connection.readEOF {
            readStreamEnded(connection)
            guard isCurrent(connection) else { return }
        }
        if connection.readQueue.withFirst({ $0.isUnbounded }) == true, connection.buffer.count >= readBufferLimit(connection) {
            close(error: .readMaxedOut(maxLength: readBufferLimit(connection)))
            return
        }
        armReadTimer(connection)
        updateInterest(connection)
        if connection.needsFlush {
            connection.needsFlush = false
            flushWrites(connection)
        }
        closeIfFinished()
    }

    /// Takes every read that `unread` completes off the queue into `completed`, in order, and
    /// returns how many bytes they took. Sets `failure` when a read maxes out or its consumer throws.
    /// A consumer may call back into the socket (a frame handler that queues a read, withdraws one or
    /// disconnects), so the head's matcher is a copy (keeping a consumer alive while it runs) and the
    /// queue is checked again after each match. The request itself is not copied: it is taken off the
    /// queue once complete.
    private func satisfyReads(
        _ connection: ConnectionState, from unread: UnsafeRawBufferPointer,
        into completed: inout [DelegateEvent], failure: inout SocketError?
    ) -> Int {
        var consumed = 0
        while isCurrent(connection), let (id, matcher) = connection.readQueue.withFirst({ ($0.id, $0.matcher) }) {
            // Queued after startTLS: waits for the handshake (the bytes before it may be TLS's).
            if waitsForTLS(connection, id: id) { return consumed }
            // A consumer hands frames on while it is matched: the reads before it are delivered first
            // (processReads delivers them and calls again), so callbacks keep the reads' order.
            if case .consuming = matcher.kind, !completed.isEmpty { return consumed }
            let rest = UnsafeRawBufferPointer(rebasing: unread[consumed...])
            connection.isMatching = true
            let match = matcher.match(rest)
            connection.isMatching = false
            guard isCurrent(connection) || isConsumed(match) else { return consumed }
            guard connection.readQueue.withFirst({ $0.id }) == id else {
                // The consumer withdrew its own read: what it took is taken; match the next one.
                if case .consumed(let length) = match { consumed += length }
                if case .complete(let length) = match { consumed += length }
                continue
            }
            switch match {
            case .complete(let length):
                let head = connection.readQueue.removeFirst()
                eventLoop.spareEventArrays.append(
                    completion(of: head, bytes: UnsafeRawBufferPointer(rebasing: rest[..<length])), to: &completed)
                consumed += length
            case .consumed(let length):
                consumed += length
                if consumed == unread.count { return consumed }  // nothing left to show the consumer
            case .needMore(let scanned):
                connection.readQueue.updateFirst { $0.scanned = scanned }
                return consumed
            case .maxedOut(let maxLength):
                failure = .readMaxedOut(maxLength: maxLength)
                return consumed
            case .invalid(let reason):
                failure = .decodingFailed(reason)
                return consumed
            }
        }
        return consumed
    }

    /// Whether `match` took bytes that must be counted even though the socket closed meanwhile.
    private func isConsumed(_ match: ReadRequest.Match) -> Bool {
        switch match {
        case .complete, .consumed: return true
        default: return false
        }
    }

    /// The event that completes `request` with `bytes`.
    private func completion(of request: ReadRequest, bytes: UnsafeRawBufferPointer) -> DelegateEvent {
        switch request.completion {
        case .delegate(let target, let offset):
            if let target { TCPSocket.write(bytes, into: target, at: offset) }
            return .read(Data(bytes), tag: request.tag)
        case .handler(_, let handler):
            return .handled(handler, request.handlerData(bytes, length: bytes.count))
        }
    }

    /// Writes `bytes` into a caller's buffer at `offset`, growing it as needed, as GCDAsyncSocket does.
    private static func write(_ bytes: UnsafeRawBufferPointer, into target: NSMutableData, at offset: Int) {
        let replaced = max(0, min(bytes.count, target.length - offset))
        guard let base = bytes.baseAddress else { return }
        target.replaceBytes(in: NSRange(location: offset, length: replaced), withBytes: base, length: bytes.count)
    }

    private func deliver(_ completed: inout [DelegateEvent]) {
        for event in completed {
            if case .handled(let handler, let data) = event {
                // Already off the queue: a handler read completes even if an earlier one disconnected.
                handler(.success(data))
                continue
            }
            // A delegate on the loop thread may disconnect from within the callback.
            guard state == .connected else { break }
            emit(event)
        }
        completed.removeAll(keepingCapacity: true)
    }

    /// Tells the delegate how many more bytes the unfinished current read has received.
    /// Handler reads (``TCPConnection``, FramedSocket) report none: their owner is not the delegate.
    private func reportReadProgress(_ connection: ConnectionState) {
        let unread = connection.buffer.count
        guard
            let (isHandlerRead, done, reported, tag) = connection.readQueue.withFirst({
                ($0.isHandlerRead, $0.bytesDone(unread: unread), $0.reportedBytes, $0.tag)
            }), !isHandlerRead, done > reported
        else { return }
        let delta = UInt(done - reported)
        connection.readQueue.updateFirst { $0.reportedBytes = done }
        emit(.readPartial(delta, tag: tag))
    }

    /// The peer sent FIN and the reads have taken what they could: disconnect, or (half-close mode)
    /// report the closed read stream once nothing buffered can complete a read.
    private func readStreamEnded(_ connection: ConnectionState) {
        let stuck = !connection.readQueue.isEmpty  // processReads left these unsatisfied: they never will be
        guard connection.buffer.isEmpty || stuck else { return }  // wait for the delegate's next read
        guard !loopOptions.options.autoDisconnectOnClosedReadStream else {
            close(error: .closedByPeer)
            return
        }
        if stuck {
            connection.readTimeout.cancel()
            for request in connection.readQueue.removeAll() { fail(request, .closedByPeer) }
        }
        guard !connection.readStreamClosed else { return }
        connection.readStreamClosed = true
        emit(.readStreamClosed)
        if connection.writeStreamClosed { close(error: nil) }
    }
}
