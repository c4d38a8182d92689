import SocketFraming

/// Where one read's whole one-frame messages are unmasked to be handed on (``WebSocket``'s consuming
/// read): one block for the read, allocated at its first masked frame (at least 1 KiB, or the frame's
/// payload), grown for a larger one, freed when the read's frames have been handed on. Unmasked frames
/// (a client's, which the server never masks) are handed on in place, with no copy.
struct UnmaskScratch {
    /// The smallest block: a read's messages of up to 1 KiB share one allocation of glibc's thread cache.
    static let minimumBytes = 1024
    private var storage: UnsafeMutableRawBufferPointer?

    /// The payload of the whole frame at the front of `bytes` (its header `header`), unmasked: in this
    /// scratch buffer when the frame is masked (valid until the next call or ``deallocate()``), else in
    /// place.
    mutating func unmasked(_ header: WebSocketFrameHeader, in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let start = header.headerLength
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<start + header.payloadLength])
        guard let key = header.maskingKey, !payload.isEmpty else { return payload }
        let count = payload.count
        if (storage?.count ?? 0) < count {
            storage?.deallocate()
            storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, Self.minimumBytes), alignment: 16)
        }
        guard let target = storage?.baseAddress else { return payload }
        key.apply(from: payload, to: target)
        return UnsafeRawBufferPointer(start: target, count: count)
    }

    /// Frees the buffer (the read is done).
    mutating func deallocate() {
        storage?.deallocate()
        storage = nil
    }
}
