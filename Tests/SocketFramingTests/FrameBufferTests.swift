import Foundation
import TestSupport
import Testing
@testable import SocketFraming

@Suite(.cpuBound) struct FrameBufferTests {
    @Test func appended_bytes_are_readable_in_order() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [1, 2])
        buffer.append(Data([3]))
        [UInt8]([4, 5]).withUnsafeBytes { buffer.append($0) }
        #expect(buffer.readableBytes == 5)
        #expect(buffer.readData(count: 5) == Data([1, 2, 3, 4, 5]))
        #expect(buffer.readableBytes == 0)
    }

    @Test func readData_returns_nil_and_consumes_nothing_when_too_few_bytes() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [1, 2, 3])
        #expect(buffer.readData(count: 4) == nil)
        #expect(buffer.readData(count: -1) == nil)
        #expect(buffer.readableBytes == 3)
        #expect(buffer.readData(count: 0) == Data())
        #expect(buffer.readData(count: 2) == Data([1, 2]))
        #expect(buffer.readableBytes == 1)
    }

    @Test func getInteger_reads_both_byte_orders_from_the_reader_index_without_consuming() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0xFF, 0x12, 0x34, 0x56, 0x78])
        buffer.moveReaderIndex(forwardBy: 1)
        #expect(buffer.getInteger(at: 0, as: UInt16.self, byteOrder: .bigEndian) == 0x1234)
        #expect(buffer.getInteger(at: 0, as: UInt16.self, byteOrder: .littleEndian) == 0x3412)
        #expect(buffer.getInteger(at: 0, as: UInt32.self, byteOrder: .bigEndian) == 0x1234_5678)
        #expect(buffer.getInteger(at: 0, as: UInt32.self, byteOrder: .littleEndian) == 0x7856_3412)
        #expect(buffer.getInteger(at: 3, as: UInt8.self) == 0x78)
        #expect(buffer.getInteger(at: 2, as: Int16.self, byteOrder: .bigEndian) == 0x5678)
        #expect(buffer.readableBytes == 4)
    }

    @Test func getInteger_reads_signed_values_by_their_bit_pattern() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0xFF, 0xFE])
        #expect(buffer.getInteger(at: 0, as: Int16.self, byteOrder: .bigEndian) == -2)
        #expect(buffer.getInteger(at: 0, as: Int16.self, byteOrder: .littleEndian) == -257)
    }

    @Test func getInteger_returns_nil_past_the_readable_bytes_or_before_them() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [1, 2, 3])
        #expect(buffer.getInteger(at: 0, as: UInt32.self) == nil)
        #expect(buffer.getInteger(at: 2, as: UInt16.self) == nil)
        #expect(buffer.getInteger(at: -1, as: UInt8.self) == nil)
        #expect(buffer.getInteger(at: Int.max, as: UInt8.self) == nil)
        #expect(buffer.getUnsignedInteger(at: 1, byteCount: 3) == nil)
        #expect(buffer.getUnsignedInteger(at: -1, byteCount: 1) == nil)
    }

    @Test func getUnsignedInteger_reads_three_byte_fields() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0x01, 0x02, 0x03])
        #expect(buffer.getUnsignedInteger(at: 0, byteCount: 3, byteOrder: .bigEndian) == 0x01_0203)
        #expect(buffer.getUnsignedInteger(at: 0, byteCount: 3, byteOrder: .littleEndian) == 0x03_0201)
    }

    @Test func withUnsafeReadableBytes_sees_only_unconsumed_bytes() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [1, 2, 3, 4])
        buffer.moveReaderIndex(forwardBy: 3)
        #expect(buffer.withUnsafeReadableBytes { Array($0) } == [4])
    }

    @Test func consumed_bytes_are_reclaimed_once_they_are_half_the_storage() {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: Array(repeating: 7, count: 1000))
        buffer.moveReaderIndex(forwardBy: 499)
        buffer.append(contentsOf: [1])
        #expect(buffer.storedBytes == 1001)  // 499 consumed < 501 unconsumed: kept
        buffer.moveReaderIndex(forwardBy: 2)
        buffer.append(contentsOf: [2])
        #expect(buffer.storedBytes == 501)  // 501 consumed >= 500 unconsumed: reclaimed
        #expect(buffer.readableBytes == 501)
        #expect(buffer.getInteger(at: 499, as: UInt16.self) == 0x0102)
    }

    @Test func a_stream_consumed_frame_by_frame_keeps_only_the_unconsumed_bytes() {
        var buffer = FrameBuffer()
        for round in 0..<10_000 {
            buffer.append(contentsOf: [UInt8(truncatingIfNeeded: round), 1, 2, 3, 4])
            #expect(buffer.storedBytes == (round == 0 ? 5 : 6))
            #expect(buffer.readData(count: round == 0 ? 4 : 5) != nil)
        }
        #expect(buffer.readableBytes == 1)
    }
}
