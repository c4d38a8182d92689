// Fuzz target: LengthFieldBasedFrameDecoder in every configuration: widths 1, 2, 3, 4, 8, both byte orders,
// offsets, adjustments (including ones that overflow), stripping and fail-fast.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLengthField(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let width = [1, 2, 3, 4, 8][input.int(in: 0...4)]
    let offset = input.int(in: 0...3)
    let byteOrder: ByteOrder = input.bool() ? .bigEndian : .littleEndian
    let adjustmentByte = Int(Int8(bitPattern: input.byte()))
    // Mostly small adjustments; now and then the extremes, which must not overflow.
    let adjustment = adjustmentByte == -128 ? Int.min : adjustmentByte == 127 ? Int.max : adjustmentByte % 16
    let strip = input.int(in: 0...(offset + width + 2))
    let failFast = input.bool()
    let maxFrameLength = offset + width + input.int(in: 0...255)
    let chunkSeed = input.byte()
    LengthFieldBasedFrameDecoder.check({
        LengthFieldBasedFrameDecoder(maxFrameLength: maxFrameLength, lengthFieldOffset: offset, lengthFieldLength: width,
                                     byteOrder: byteOrder, lengthAdjustment: adjustment, initialBytesToStrip: strip,
                                     failFast: failFast)
    }, input.rest(), chunkSeed: chunkSeed, maxBufferedBytes: maxFrameLength, consumesOnNil: true)
    return 0
}
