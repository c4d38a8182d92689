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
    public func readData(to data: Data, withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset: UInt, maxLength: UInt = 0, tag: Int) {
        guard !data.isEmpty else {
            rejectRead(tag: tag, .badParam("a read to a delimiter needs a delimiter of at least one byte"))
            return
        }
        if maxLength > 0 && maxLength < UInt(data.count) {
            rejectRead(tag: tag, .badParam("maxLength \(maxLength) is shorter than the delimiter"))
            return
        }
        enqueueRead(.toData(delimiter: [UInt8](data), maxLength: Int(clamping: maxLength)),
                    timeout: timeout, tag: tag, buffer: buffer, offset: bufferOffset)
    }

    /// Reads one frame of a framing the caller defines: `boundary` is given the unread bytes and says
    /// how long the first frame is (or that more bytes are needed); the read completes with exactly
    /// that frame's bytes, header included. A frame split across reads or glued to the next is found
    /// either way. The socket disconnects with ``SocketError/badFrame(_:)`` when `boundary` throws, and
    /// with ``SocketError/readMaxedOut(maxLength:)`` when `maxLength` bytes (0 = no limit beyond
    /// ``maxBufferedReadBytes``) hold no whole frame. SocketFraming's decoders supply boundaries.
    public func readData(toFrameEnd boundary: @escaping FrameBoundary, withTimeout timeout: TimeInterval, maxLength: UInt = 0, tag: Int) {
        enqueueRead(.toFrameEnd(boundary: boundary, maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
    }

    /// Reads every whole frame that has arrived (at least one) as one run of bytes, headers included:
    /// `boundary` finds each frame's end as in ``readData(toFrameEnd:withTimeout:maxLength:tag:)``, and
    /// the read completes with the bytes up to the end of the last whole frame, leaving a partial frame
    /// after it for the next read. For relays and echo servers that pass frames on without looking
    /// inside: one callback, one copy and one write per burst of frames instead of one per frame.
    /// Frames before a malformed one are delivered first; then the socket disconnects with
    /// ``SocketError/badFrame(_:)``. `maxLength` bounds each frame (0 = no limit beyond
    /// ``maxBufferedReadBytes``); a frame over it ends the connection with
    /// ``SocketError/readMaxedOut(maxLength:)``.
    public func readData(toLastFrameEnd boundary: @escaping FrameBoundary, withTimeout timeout: TimeInterval, maxLength: UInt = 0, tag: Int) {
        enqueueRead(.toLastFrameEnd(boundary: boundary, maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
    }

    /// Reads one frame and decodes it in place with `decoding`, without first copying the bytes out:
    /// completes with ``TCPSocketDelegate/socket(_:didReadFrame:withTag:)`` carrying the decoder's
    /// frame. Frames decoded before a malformed one are delivered first; then the socket disconnects
    /// with ``SocketError/badFrame(_:)``. `maxLength` bounds the bytes a frame may occupy (0 = no limit
    /// beyond ``maxBufferedReadBytes``). SocketFraming's `readFrame(using:withTimeout:tag:)` builds
    /// `decoding` from any of its decoders.
    public func readFrame(decodingWith decoding: @escaping FrameDecoding, withTimeout timeout: TimeInterval, maxLength: UInt = 0, tag: Int) {
        enqueueRead(.decodedFrame(decoding: decoding, maxLength: Int(clamping: maxLength)), timeout: timeout, tag: tag)
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
        let request = ReadRequest(kind: kind, timeout: timeout, tag: tag, buffer: buffer, bufferOffset: Int(offset))
        if eventLoop.inEventLoop {
            queueRead(request)
        } else {
            let transfer = UnsafeTransfer(request)
            eventLoop.execute { [self] in queueRead(transfer.value) }
        }
    }

    /// Queues `request` or rejects it. Loop thread only.
    private func queueRead(_ request: ReadRequest) {
        if let refusal = readRefusal {
            rejectRead(tag: request.tag, refusal)
            return
        }
        nextRequestID &+= 1
        var queued = request
        queued.id = nextRequestID
        readQueue.append(queued)
        if state == .connected { processReads() }
    }

    /// Why a read cannot be queued now, or nil. Loop thread only.
    private var readRefusal: SocketError? {
        guard state == .connecting || state == .connected else {
            return .badConfig("the socket is not connected or connecting")
        }
        if endAfterReads || endAfterWrites { return .badConfig("the socket is disconnecting") }
        if readStreamClosed && buffer.isEmpty { return .closedByPeer }
        return nil
    }

    func rejectRead(tag: Int, _ error: SocketError) {
        emit(.rejectedRead(tag: tag, error))
    }
}
