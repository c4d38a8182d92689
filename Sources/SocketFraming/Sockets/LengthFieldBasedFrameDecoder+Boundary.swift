import AsyncSocket

extension LengthFieldBasedFrameDecoder {
    /// This decoder's framing as a ``FrameBoundary``, for ``TCPSocket/readData(toFrameEnd:withTimeout:maxLength:tag:)``
    /// and ``TCPSocket/readData(toLastFrameEnd:withTimeout:maxLength:tag:)``: the whole frame's length in
    /// bytes (header included; `initialBytesToStrip` does not apply, the read hands over the frame as it
    /// came), computed as Netty's decoder does: `lengthFieldOffset + lengthFieldLength + lengthAdjustment +`
    /// the length field's value, in `byteOrder`. Returns nil until the frame has fully arrived.
    ///
    /// Throws ``FramingError/frameTooLong(length:maxFrameLength:)`` as soon as the length field says the
    /// frame is over `maxFrameLength`, and ``FramingError/invalidLengthField(_:)`` for a length that is
    /// negative after adjustment or overflows; the read then ends the connection with
    /// ``SocketError/badFrame(_:)``. Keeps no state, so one boundary can serve every connection.
    public var frameBoundary: FrameBoundary {
        let decoder = self
        let fieldStart = lengthFieldOffset
        let fieldEnd = lengthFieldOffset + lengthFieldLength
        return { bytes in
            guard bytes.count >= fieldEnd else { return nil }
            var raw: UInt64 = 0
            if decoder.byteOrder == .bigEndian {
                for index in fieldStart..<fieldEnd { raw = raw << 8 | UInt64(bytes[index]) }
            } else {
                for index in (fieldStart..<fieldEnd).reversed() { raw = raw << 8 | UInt64(bytes[index]) }
            }
            let length = try decoder.frameLength(lengthField: raw)
            guard length <= decoder.maxFrameLength else {
                throw FramingError.frameTooLong(length: length, maxFrameLength: decoder.maxFrameLength)
            }
            return bytes.count >= length ? length : nil
        }
    }
}
