import Foundation
import SocketFraming
import TestSupport
import Testing

/// What a read bounded by a byte limit got: the frames, then the error that ended it, if any.
struct BoundedReadOutcome<Frame: Equatable>: Equatable {
    var frames: [Frame]
    var error: BoundedReadError?
}

/// Why a bounded read ended early.
enum BoundedReadError: Error, Equatable {
    /// `limit` bytes were buffered and the decoder still wanted more: what a socket reports as
    /// `SocketError.readMaxedOut(maxLength: limit)`.
    case readMaxedOut(limit: Int)
    /// The decoder threw.
    case framing(FramingError)
}

/// Reads frames the way the socket adapter does with a byte limit (issue 9): TCP delivers `segments`
/// in order; the reader buffers at most `limit` bytes, decodes after each read until the decoder wants
/// more, and gives up with `.readMaxedOut` when `limit` bytes are buffered and the decoder still wants
/// more. Bytes of a segment that do not fit wait for the next read.
func readBounded<D: FrameDecoder>(
    _ decoder: D, segments: [[UInt8]], limit: Int
) -> BoundedReadOutcome<D.Frame> where D.Frame: Equatable {
    var decoder = decoder
    var buffer = FrameBuffer()
    var frames: [D.Frame] = []
    for segment in segments {
        var rest = segment[...]
        while !rest.isEmpty {
            let taken = rest.prefix(limit - buffer.readableBytes)
            buffer.append(contentsOf: Array(taken))
            rest = rest.dropFirst(taken.count)
            do {
                while let frame = try decoder.decode(&buffer) { frames.append(frame) }
            } catch {
                return BoundedReadOutcome(frames: frames, error: .framing(error))
            }
            if buffer.readableBytes >= limit { return BoundedReadOutcome(frames: frames, error: .readMaxedOut(limit: limit)) }
        }
    }
    return BoundedReadOutcome(frames: frames, error: nil)
}

/// `value`'s low `byteCount` bytes, most significant first (network byte order).
func bigEndian(_ value: UInt64, byteCount: Int) -> [UInt8] {
    (0..<byteCount).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

/// The segmentings the issue names: whole, one byte at a time, and the last 4 and the last 8 bytes apart.
func segmentings(_ bytes: [UInt8], oneByteAtATime: Bool = true) -> [(name: String, segments: [[UInt8]])] {
    var result: [(String, [[UInt8]])] = [("whole", [bytes])]
    if oneByteAtATime { result.append(("one byte at a time", bytes.map { [$0] })) }
    for tail in [4, 8] where bytes.count > tail {
        result.append(("last \(tail) bytes apart", [Array(bytes.dropLast(tail)), Array(bytes.suffix(tail))]))
    }
    return result
}

/// Feeds `bytes` one at a time; returns the error and after how many bytes it came (nil if none), the
/// frames before it, and the readable bytes left.
func feedByteByByte<D: FrameDecoder>(_ decoder: D, _ bytes: [UInt8]) -> (error: FramingError?, after: Int, frames: [D.Frame], readable: Int)
{
    var decoder = decoder
    var buffer = FrameBuffer()
    var frames: [D.Frame] = []
    for (index, byte) in bytes.enumerated() {
        buffer.append(contentsOf: [byte])
        do {
            while let frame = try decoder.decode(&buffer) { frames.append(frame) }
        } catch {
            return (error, index + 1, frames, buffer.readableBytes)
        }
    }
    return (nil, bytes.count, frames, buffer.readableBytes)
}

/// Issue 9: one meaning of "maximum frame length" for every decoder, `FrameDecoder.maximumFrameLength`,
/// the most bytes a frame occupies on the wire. A reader bounded by it accepts a frame of exactly that
/// many bytes however TCP splits it; one byte more is the decoder's typed error, as soon as the header
/// says so.
@Suite(.cpuBound) struct MaximumFrameLengthTests {
    /// Checks that `frame` (exactly `decoder.maximumFrameLength` bytes) decodes to `expected` under every
    /// segmenting, read with the limit `maximumFrameLength`.
    func expectMaximumFrameDecodes<D: FrameDecoder>(
        _ decoder: D, _ frame: [UInt8], _ expected: D.Frame, oneByteAtATime: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where D.Frame: Equatable {
        #expect(frame.count == decoder.maximumFrameLength, sourceLocation: sourceLocation)
        for (name, segments) in segmentings(frame, oneByteAtATime: oneByteAtATime) {
            let outcome = readBounded(decoder, segments: segments, limit: decoder.maximumFrameLength)
            #expect(outcome == BoundedReadOutcome(frames: [expected], error: nil), "\(name)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Eight-byte header (the issue's case)

    static func eightByteFrame(serviceID: UInt32, bodyLength: Int) -> [UInt8] {
        bigEndian(UInt64(serviceID), byteCount: 4) + bigEndian(UInt64(bodyLength), byteCount: 4)
            + (0..<bodyLength).map { UInt8(truncatingIfNeeded: $0) }
    }

    @Test func eight_byte_default_maximum_is_header_plus_one_mebibyte() {
        #expect(EightByteHeaderFrameDecoder().maxBodyLength == 1_048_576)
        #expect(EightByteHeaderFrameDecoder().maximumFrameLength == 1_048_584)
        #expect(EightByteHeaderFrameDecoder(maxBodyLength: 0).maximumFrameLength == 8)
        #expect(EightByteHeaderFrameDecoder(maxBodyLength: .max).maximumFrameLength == .max)
    }

    @Test func eight_byte_frame_with_a_one_mebibyte_body_is_read_however_split_with_maximum_frame_length_as_limit() {
        let frame = Self.eightByteFrame(serviceID: 7, bodyLength: 1_048_576)
        let expected = EightByteHeaderFrame(serviceID: 7, body: Data(frame.dropFirst(8)))
        expectMaximumFrameDecodes(EightByteHeaderFrameDecoder(), frame, expected, oneByteAtATime: false)
    }

    @Test func eight_byte_frame_with_a_one_mebibyte_body_is_refused_by_a_one_mebibyte_limit_when_split() {
        // What the issue saw: the socket's 1 MiB read limit (or the decoder's maxBodyLength passed as the
        // limit) holds no whole frame of 1 MiB + 8 bytes.
        let frame = Self.eightByteFrame(serviceID: 7, bodyLength: 1_048_576)
        let outcome = readBounded(
            EightByteHeaderFrameDecoder(), segments: [Array(frame.dropLast(8)), Array(frame.suffix(8))],
            limit: 1_048_576)
        #expect(outcome == BoundedReadOutcome(frames: [], error: .readMaxedOut(limit: 1_048_576)))
    }

    @Test func eight_byte_maximum_frame_decodes_whole_byte_by_byte_and_split() {
        let decoder = EightByteHeaderFrameDecoder(maxBodyLength: 300)
        #expect(decoder.maximumFrameLength == 308)
        let frame = Self.eightByteFrame(serviceID: 0x0102_0304, bodyLength: 300)
        expectMaximumFrameDecodes(decoder, frame, EightByteHeaderFrame(serviceID: 0x0102_0304, body: Data(frame.dropFirst(8))))
        DecoderVerifier.verify(
            { decoder }, bytes: frame + frame,
            expecting: Array(repeating: EightByteHeaderFrame(serviceID: 0x0102_0304, body: Data(frame.dropFirst(8))), count: 2),
            randomCuttings: 20)
    }

    @Test func eight_byte_frame_one_byte_over_the_maximum_fails_once_its_header_is_in() {
        let decoder = EightByteHeaderFrameDecoder(maxBodyLength: 300)
        let result = feedByteByByte(decoder, Self.eightByteFrame(serviceID: 1, bodyLength: 301))
        #expect(result.error == .frameTooLong(length: 301, maxFrameLength: 300))
        #expect(result.after == 8)
        #expect(result.frames.isEmpty)
        #expect(result.readable == 8)
        let outcome = readBounded(decoder, segments: [Self.eightByteFrame(serviceID: 1, bodyLength: 301)], limit: 308)
        #expect(outcome == BoundedReadOutcome(frames: [], error: .framing(.frameTooLong(length: 301, maxFrameLength: 300))))
    }

    // MARK: - JSON header

    @Test func json_header_default_maximum_is_header_crlf_and_one_mebibyte() {
        #expect(JSONHeaderFrameDecoder().maximumFrameLength == 4_096 + 2 + 1_048_576)
        #expect(JSONHeaderFrameDecoder().maximumFrameLength == 1_052_674)
        #expect(JSONHeaderFrameDecoder(maxHeaderLength: 20, maxBodyLength: 300).maximumFrameLength == 322)
        #expect(JSONHeaderFrameDecoder(maxHeaderLength: .max, maxBodyLength: .max).maximumFrameLength == .max)
    }

    @Test func json_header_frame_with_a_one_mebibyte_body_is_read_however_split_with_maximum_frame_length_as_limit() {
        let decoder = JSONHeaderFrameDecoder()
        let body = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let frame = utf8(#"{"size":1048576}"#) + [0x0D, 0x0A] + body
        for (name, segments) in segmentings(frame, oneByteAtATime: false) {
            #expect(
                readBounded(decoder, segments: segments, limit: decoder.maximumFrameLength)
                    == BoundedReadOutcome(frames: [JSONHeaderFrame(fields: [:], body: Data(body))], error: nil), "\(name)")
        }
    }

    @Test func json_header_maximum_frame_decodes_whole_byte_by_byte_and_split() {
        let decoder = JSONHeaderFrameDecoder(maxHeaderLength: 20, maxBodyLength: 300)
        let header = utf8(#"{"size":300,"p":"x"}"#)
        #expect(header.count == 20)
        let body = [UInt8](repeating: 0x62, count: 300)
        expectMaximumFrameDecodes(
            decoder, header + [0x0D, 0x0A] + body,
            JSONHeaderFrame(fields: ["p": .string("x")], body: Data(body)))
    }

    @Test func json_header_frame_one_byte_over_the_maximum_fails_once_its_header_is_in() {
        let decoder = JSONHeaderFrameDecoder(maxHeaderLength: 20, maxBodyLength: 300)
        let wire = utf8(#"{"size":301,"p":"x"}"#) + [0x0D, 0x0A] + [UInt8](repeating: 0x62, count: 301)
        #expect(wire.count == decoder.maximumFrameLength + 1)
        let result = feedByteByByte(decoder, wire)
        #expect(result.error == .frameTooLong(length: 301, maxFrameLength: 300))
        #expect(result.after == 22)
        #expect(result.frames.isEmpty)
        // A header one byte over maxHeaderLength: refused once 21 bytes hold no CR LF.
        let longHeader = feedByteByByte(decoder, utf8(#"{"size":300,"p":"xy"}"#) + [0x0D, 0x0A])
        #expect(longHeader.error == .headerTooLong(length: 21, maxHeaderLength: 20))
        #expect(longHeader.after == 22)
    }

    // MARK: - Length field (Netty's maxFrameLength already counts the whole frame)

    static func lengthPrefixedFrame(bodyLength: Int) -> [UInt8] {
        bigEndian(UInt64(bodyLength), byteCount: 4) + (0..<bodyLength).map { UInt8(truncatingIfNeeded: $0 &* 3) }
    }

    @Test func length_field_maximum_is_nettys_max_frame_length() {
        #expect(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20).maximumFrameLength == 1_048_576)
        #expect(
            LengthFieldBasedFrameDecoder(
                maxFrameLength: 20, lengthFieldOffset: 1, lengthFieldLength: 2,
                lengthAdjustment: 1, initialBytesToStrip: 3
            ).maximumFrameLength == 20)
    }

    @Test func length_prefixed_maximum_frame_decodes_whole_byte_by_byte_and_split() {
        let decoder = LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 260)
        let frame = Self.lengthPrefixedFrame(bodyLength: 256)
        expectMaximumFrameDecodes(decoder, frame, Data(frame.dropFirst(4)))
    }

    @Test func length_prefixed_frame_one_byte_over_the_maximum_fails_once_its_length_field_is_in() {
        let result = feedByteByByte(
            LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 260),
            Self.lengthPrefixedFrame(bodyLength: 257))
        #expect(result.error == .frameTooLong(length: 261, maxFrameLength: 260))
        #expect(result.after == 4)
        #expect(result.frames.isEmpty)
    }

    @Test func netty_sixth_example_header_at_the_maximum_decodes_and_one_byte_more_fails() {
        // HDR1 (1 byte), length (2 bytes, counting the bytes after HDR2), HDR2 (1 byte), content:
        // 1 + 2 + (value + 1) bytes in all; a maximum of 20 allows a value of 16.
        let decoder = LengthFieldBasedFrameDecoder(
            maxFrameLength: 20, lengthFieldOffset: 1, lengthFieldLength: 2,
            lengthAdjustment: 1, initialBytesToStrip: 3)
        let content = [UInt8](repeating: 0x43, count: 16)
        let frame: [UInt8] = [0xCA, 0x00, 0x10, 0xFE] + content
        expectMaximumFrameDecodes(decoder, frame, Data([0xFE] + content))
        let result = feedByteByByte(decoder, [0xCA, 0x00, 0x11, 0xFE] + content + [0x43])
        #expect(result.error == .frameTooLong(length: 21, maxFrameLength: 20))
        #expect(result.after == 3)
    }

    // MARK: - Delimiter (Netty's maxFrameLength excludes the delimiter)

    @Test func delimiter_maximum_adds_the_longest_delimiter() {
        #expect(DelimiterBasedFrameDecoder(maxFrameLength: 300, delimiter: DelimiterBasedFrameDecoder.crlf).maximumFrameLength == 302)
        #expect(DelimiterBasedFrameDecoder.lines(maxFrameLength: 8192).maximumFrameLength == 8194)
        #expect(DelimiterBasedFrameDecoder(maxFrameLength: 0, delimiters: [[0x00], [0x01, 0x02, 0x03]]).maximumFrameLength == 3)
        #expect(DelimiterBasedFrameDecoder(maxFrameLength: .max, delimiter: [0x00]).maximumFrameLength == .max)
    }

    @Test func delimiter_maximum_frame_decodes_whole_byte_by_byte_and_split() {
        let content = [UInt8](repeating: 0x61, count: 300)
        expectMaximumFrameDecodes(
            DelimiterBasedFrameDecoder(maxFrameLength: 300, delimiter: DelimiterBasedFrameDecoder.crlf),
            content + [0x0D, 0x0A], Data(content))
        expectMaximumFrameDecodes(DelimiterBasedFrameDecoder.lines(maxFrameLength: 300), content + [0x0D, 0x0A], Data(content))
        expectMaximumFrameDecodes(
            DelimiterBasedFrameDecoder(maxFrameLength: 300, delimiter: DelimiterBasedFrameDecoder.crlf, stripDelimiter: false),
            content + [0x0D, 0x0A], Data(content + [0x0D, 0x0A]))
    }

    @Test func delimiter_frame_one_byte_over_the_maximum_fails_before_the_limit_is_reached() {
        let decoder = DelimiterBasedFrameDecoder(maxFrameLength: 300, delimiter: DelimiterBasedFrameDecoder.crlf)
        let wire = [UInt8](repeating: 0x61, count: 301) + [0x0D, 0x0A]
        let result = feedByteByByte(decoder, wire)
        // 302 bytes: the first 301 cannot be part of a CR LF still arriving, so the frame is too long.
        #expect(result.error == .frameTooLong(length: 301, maxFrameLength: 300))
        #expect(result.after == 302)
        #expect(
            readBounded(decoder, segments: [wire], limit: 302)
                == BoundedReadOutcome(frames: [], error: .framing(.frameTooLong(length: 301, maxFrameLength: 300))))
    }

    // MARK: - Fixed length, seven-byte header, transforms

    @Test func fixed_length_maximum_is_the_frame_length() {
        let decoder = FixedLengthFrameDecoder(frameLength: 300)
        #expect(decoder.maximumFrameLength == 300)
        let frame = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        expectMaximumFrameDecodes(decoder, frame, Data(frame))
    }

    @Test func seven_byte_maximum_is_header_plus_the_largest_two_byte_length() {
        let decoder = SevenByteHeaderFrameDecoder()
        #expect(decoder.maximumFrameLength == 65_542)
        #expect(SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: 10).maximumFrameLength == 65_542)
        let body = [UInt8](repeating: 0x7B, count: 65_535)
        let frame: [UInt8] = [0x00, 0x01, 0x00, 0x0A, 0x00, 0xFF, 0xFF] + body
        // One more byte cannot be expressed: the body length field holds at most 65_535.
        expectMaximumFrameDecodes(decoder, frame, SevenByteHeaderFrame(version: 1, functionCode: 10, body: Data(body)))
    }

    @Test func a_transformed_decoder_keeps_its_base_wire_maximum() throws {
        let decoder = LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 260).transformed(by: TestCipher(key: 0x21))
        #expect(decoder.maximumFrameLength == 260)
        #expect(
            LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20).transformed(by: CompressionTransform())
                .maximumFrameLength == 1_048_576)
        let plain = Data((0..<255).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        let cipherBody = try TestCipher(key: 0x21).encode(plain)
        #expect(cipherBody.count == 256)
        expectMaximumFrameDecodes(decoder, bigEndian(256, byteCount: 4) + [UInt8](cipherBody), plain)
        let tooLong = feedByteByByte(decoder, Self.lengthPrefixedFrame(bodyLength: 257))
        #expect(tooLong.error == .frameTooLong(length: 261, maxFrameLength: 260))
        #expect(tooLong.after == 4)
    }
}
