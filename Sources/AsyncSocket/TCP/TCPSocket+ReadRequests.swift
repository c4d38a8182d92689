import Foundation

extension TCPSocket {
    // MARK: Queuing reads (GCDAsyncSocket's read methods)

    /// Reads whatever bytes are available (at least one). Completes with
    /// ``TCPSocketDelegate/socket(_:didRead:withTag:)``.
    ///
    /// - Parameters:
    ///   - timeout: seconds from when this read becomes the current one; negative means none. On
    ///     expiry the delegate may extend it; otherwise the socket disconnects with
    ///     ``SocketError/readTimeout(tag:)``.
    ///   - tag: handed back in the callback, never sent.
    public func readData(withTimeout timeout: TimeInterval, tag: Int) {
        enqueueRead(.available(maxLength: 0), timeout: timeout, tag: tag)
    }

    /// Reads whatever bytes are available, at most `maxLength` bytes of them (0 = no limit). The rest
    /// stays buffered for the next read.
    public func readData(withTimeout timeout: TimeInterval, maxLength: UInt, tag: Int) {
        enqueueRead(.available(maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
    }

    /// Reads whatever bytes are available into `buffer` starting at `bufferOffset` bytes (the buffer
    /// grows as needed; `nil` = a new buffer), at most `maxLength` bytes (0 = no limit). An offset past
    /// the buffer's end is rejected with ``SocketError/badParam(_:)``.
    public func readData(withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset: UInt, maxLength: UInt = 0, tag: Int) {
        enqueueRead(.available(maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag, buffer: buffer, offset: bufferOffset)
    }

    /// Reads exactly `length` bytes (GCDAsyncSocket's `readDataToLength:withTimeout:tag:`). A length of
    /// 0 is rejected with ``SocketError/badParam(_:)``.
    public func readData(toLength length: UInt, withTimeout timeout: TimeInterval, tag: Int) {
        readData(toLength: length, withTimeout: timeout, buffer: nil, bufferOffset: 0, tag: tag)
    }

    /// Reads exactly `length` bytes into `buffer` at `bufferOffset` (see
    /// ``readData(withTimeout:buffer:bufferOffset:maxLength:tag:)``).
    public func readData(toLength length: UInt, withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset: UInt, tag: Int) {
        guard length > 0 else {
            rejectRead(tag: tag, .badParam("a read to length needs a length above 0"))
            return
        }
        enqueueRead(.toLength(Int(clamping: length)), timeout: timeout, tag: tag, buffer: buffer, offset: bufferOffset)
    }

    /// Reads up to and including the first occurrence of `data`, the delimiter (for example
    /// ``TCPSocket/crlfData``), however the bytes arrive. An empty delimiter is rejected with
    /// ``SocketError/badParam(_:)``.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: 0, tag: tag)
    }

    /// Reads up to and including the delimiter `data`, failing when `maxLength` bytes (delimiter
    /// included; 0 = no limit) arrive without it: the socket then disconnects with
    /// ``SocketError/readMaxedOut(maxLength:)``. A message of exactly `maxLength` bytes is accepted.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, maxLength: UInt, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: maxLength, tag: tag)
    }

    /// Reads up to and including the delimiter `data` into `buffer` at `bufferOffset`, with an
    /// optional `maxLength` (see ``readData(to:withTimeout:maxLength:tag:)``).
    public func readData(
        to data: Data, withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset: UInt, maxLength: UInt = 0, tag: Int
    ) {
        guard !data.isEmpty else {
            rejectRead(tag: tag, .badParam("a read to a delimiter needs a delimiter of at least one byte"))
            return
        }
        if maxLength > 0 && maxLength < UInt(data.count) {
            rejectRead(tag: tag, .badParam("maxLength \(maxLength) is shorter than the delimiter"))
            return
        }
        enqueueRead(
            .toData(delimiter: [UInt8](data), maxLength: Int(clamping: maxLength)),
            timeout: timeout, tag: tag, buffer: buffer, offset: bufferOffset)
    }

    /// Carriage return and line feed, `"\r\n"` (GCDAsyncSocket's `CRLFData`).
    public static let crlfData = Data([0x0D, 0x0A])
    /// Carriage return, `"\r"` (`CRData`).
    public static let crData = Data([0x0D])
    /// Line feed, `"\n"` (`LFData`).
    public static let lfData = Data([0x0A])
    /// A zero byte (`ZeroData`), as C strings end.
    public static let zeroData = Data([0x00])

    private func enqueueRead(_ kind: ReadRequest.Kind, timeout: TimeInterval, tag: Int, buffer: NSMutableData? = nil, offset: UInt = 0) {
        if let buffer, offset > UInt(buffer.length) {
            rejectRead(tag: tag, .badParam("bufferOffset \(offset) is past the buffer's end (\(buffer.length) bytes)"))
            return
        }
        submit(ReadRequest(kind: kind, timeout: timeout, tag: tag, completion: .delegate(buffer: buffer, offset: Int(offset))))
    }

    /// Queues a read that completes by calling `handler` on the loop thread, with the bytes (empty for
    /// a ``ReadRequest/Kind/consuming(_:maxLength:)`` read) or the error that ended it, instead of
    /// calling the delegate: what ``TCPConnection`` and the framing adapters read with. Such reads match
    /// and time out exactly as delegate reads (a timeout is never offered to the delegate to extend),
    /// and ``withdrawRead(_:)`` takes one back without losing a byte. With `readsLeftover` (the
    /// ``TCPConnection`` reads, whose socket has no delegate of the caller's), on a socket that has ended
    /// with an error the bytes it had received and no read took are still read, and the read fails
    /// with that error only when they cannot satisfy it; without it, a read queued after the end fails
    /// with ``SocketError/notConnected`` as a delegate read does (its delegate got those bytes from
    /// `socketWillDisconnect`). `timeout` in seconds, negative for none; `tag` is the tag of
    /// ``SocketError/readTimeout(tag:)``.
    package func read(
        _ kind: ReadRequest.Kind, timeout: TimeInterval, tag: Int, token: ReadToken? = nil,
        readsLeftover: Bool = false,
        handler: @escaping @Sendable (Result<Data, SocketError>) -> Void
    ) {
        var request = ReadRequest(kind: kind, timeout: timeout, tag: tag, completion: .handler(token, handler))
        request.readsLeftover = readsLeftover
        submit(request)
    }

    /// Takes back the read queued with `token`, if it has not completed: the bytes it was waiting for
    /// stay buffered for the next read, and its handler is never called. Returns whether it was still
    /// queued. Loop thread only.
    package func withdrawRead(_ token: ReadToken) -> Bool {
        eventLoop.assertInEventLoop()
        guard let connection = lifecycle.connection,
            let index = connection.readQueue.firstIndex(where: { $0.token === token })
        else { return false }
        connection.readQueue.remove(at: index)
        // The next read becomes the current one: it may be met by the bytes already buffered.
        if index == 0 && isCurrent(connection) { processReads(connection) }
        return true
    }

    private func submit(_ request: ReadRequest) {
        if eventLoop.inEventLoop {
            queueRead(request)
        } else {
            let transfer = UnsafeTransfer(request)
            eventLoop.execute { [self] in queueRead(transfer.value) }
        }
    }

    /// Queues `request` or rejects it. Loop thread only.
    private func queueRead(_ request: ReadRequest) {
        eventLoop.assertInEventLoop()
        switch lifecycle {
        case .connecting(let connection, _), .connected(let connection):
            if let refusal = readRefusal(connection) {
                fail(request, refusal)
                return
            }
            nextRequestID &+= 1
            var queued = request
            queued.id = nextRequestID
            connection.readQueue.append(queued)
            if isCurrent(connection) { processReads(connection) }
        case .closed(let error, let leftover) where request.readsLeftover:
            readAfterEnd(request, error: error, leftover: leftover)
        case .idle, .closed, .listening:
            fail(request, .notConnected)
        }
    }

    /// Why a read cannot be queued on `connection` now, or nil.
    private func readRefusal(_ connection: ConnectionState) -> SocketError? {
        if connection.endAfterReads || connection.endAfterWrites { return .disconnecting }
        if connection.readStreamClosed && connection.buffer.isEmpty { return .closedByPeer }
        return nil
    }

    /// A handler read queued after the connection ended with `error`: the bytes it left unread may
    /// still satisfy it; otherwise it fails with that error.
    private func readAfterEnd(_ request: ReadRequest, error: SocketError, leftover: ConnectionState?) {
        guard case .handler(_, let handler) = request.completion else { return }
        // Zero bytes can always be read: an empty last message (a header saying 0, then the peer's FIN)
        // reads as empty, and the end shows at the next read.
        if request.isEmptyRead {
            handler(.success(Data()))
            return
        }
        if let leftover, !leftover.buffer.isEmpty {
            let match = leftover.buffer.withUnsafeReadableBytes { request.match($0) }
            switch match {
            case .complete(let length):
                let data = leftover.buffer.withUnsafeReadableBytes { request.handlerData($0, length: length) }
                leftover.buffer.consume(length)
                handler(.success(data))
                return
            case .consumed(let length):
                leftover.buffer.consume(length)
            default:
                break
            }
        }
        handler(.failure(error))
    }

    func rejectRead(tag: Int, _ error: SocketError) {
        emit(.rejectedRead(tag: tag, error))
    }

    /// Ends `request` unfinished with `error`: a delegate read is rejected, a handler read fails.
    func fail(_ request: ReadRequest, _ error: SocketError) {
        switch request.completion {
        case .delegate: rejectRead(tag: request.tag, error)
        case .handler(_, let handler): handler(.failure(error))
        }
    }
}

extension ReadRequest {
    /// The token of a read queued with a completion handler and a token.
    var token: ReadToken? {
        if case .handler(let token, _) = completion { return token }
        return nil
    }

    /// Whether the read completes through a handler rather than the delegate.
    var isHandlerRead: Bool {
        if case .handler = completion { return true }
        return false
    }
}
