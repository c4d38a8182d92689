/// Finds where frames end without decoding them: for code that passes frames on as the bytes they came
/// in (relays, echo servers) or looks at them in place, with no copy and no allocation per frame.
///
/// A slicer keeps no state, so one value can serve every connection.
public protocol FrameSlicer: Sendable {
    /// The length in bytes of the first frame of `bytes` (oldest first), everything the frame occupies
    /// on the wire included (header, length field, delimiter), once `bytes` hold all of it; nil while
    /// they hold only part of it. Never reads past `bytes`.
    ///
    /// - Throws: `FramingError` as soon as the bytes cannot start a valid frame (for example a length
    ///   field over the maximum); the stream cannot be resynchronised after that.
    func frameLength(in bytes: UnsafeRawBufferPointer) throws(FramingError) -> Int?

    /// The most bytes one frame may occupy on the wire, as ``FrameDecoder/maximumFrameLength``: the
    /// socket adapters buffer up to this many bytes for one frame.
    var maximumFrameLength: Int { get }

    /// The length in bytes of the run of whole frames at the start of `bytes`: every frame that has
    /// fully arrived, back to back (0 when not even the first has). One call per arrival, for code that
    /// passes the run on in one piece (a relay, an echo server). The default asks
    /// ``frameLength(in:)`` frame by frame.
    ///
    /// - Throws: `FramingError` when the *first* frame is bad. A bad frame after good ones ends the run
    ///   instead, so the good frames are passed on first; the next call, which starts at the bad frame,
    ///   throws.
    func wholeFramesLength(in bytes: UnsafeRawBufferPointer) throws(FramingError) -> Int
}

extension FrameSlicer {
    public func wholeFramesLength(in bytes: UnsafeRawBufferPointer) throws(FramingError) -> Int {
        var total = 0
        while total < bytes.count {
            let length: Int?
            do {
                length = try frameLength(in: UnsafeRawBufferPointer(rebasing: bytes[total...]))
            } catch  where total > 0 {
                return total
            }
            // A frame occupies at least one byte; a slicer that says otherwise cannot make progress.
            guard let length, length > 0 else { return total }
            total += length
        }
        return total
    }
}

extension LengthFieldBasedFrameDecoder: FrameSlicer {
    /// The whole frame's length as this decoder computes it (Netty's `lengthFieldOffset +
    /// lengthFieldLength + lengthAdjustment +` the length field's value, in ``byteOrder``), header
    /// included and ``initialBytesToStrip`` not applied, once the frame has fully arrived.
    ///
    /// - Throws: ``FramingError/frameTooLong(length:maxFrameLength:)`` as soon as the length field says
    ///   the frame is over ``maxFrameLength``; ``FramingError/invalidLengthField(_:)`` for a length that
    ///   is negative after adjustment or overflows.
    public func frameLength(in bytes: UnsafeRawBufferPointer) throws(FramingError) -> Int? {
        guard let raw = lengthField(in: bytes) else { return nil }
        let length = try frameLength(lengthField: raw)
        guard length <= maxFrameLength else {
            throw .frameTooLong(length: length, maxFrameLength: maxFrameLength)
        }
        return bytes.count >= length ? length : nil
    }
}
