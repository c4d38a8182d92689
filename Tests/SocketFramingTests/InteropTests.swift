import Foundation
import SocketFraming
import TestSupport
import Testing

/// Every framing against a second implementation in another language: Tests/Interop/framing_interop.py,
/// written from the formats' descriptions with Python's `struct`, `zlib` and `json`. Its bytes must decode
/// into exactly the canonical messages below, and what our encoders write must come out of it as exactly the
/// expected lines. The canonical messages are repeated in the script.
@Suite(.cpuBound) struct InteropTests {
    // MARK: - The canonical messages, as in framing_interop.py

    static func pattern(_ count: Int, _ seed: Int) -> Data { Data((0..<count).map { UInt8(($0 * 31 + seed) % 256) }) }
    static func text(_ count: Int, _ seed: Int) -> Data { Data((0..<count).map { UInt8(0x20 + ($0 * 31 + seed) % 95) }) }

    static let bodies = [Data(), Data(utf8("hello")), pattern(300, 1), pattern(70000, 2)]
    static let textBodies = [Data(), Data(utf8("hello")), text(300, 1), text(5000, 2)]
    static let fixedBodies = (0..<4).map { pattern(8, $0) }
    static let seven = [
        SevenByteHeaderFrame(version: 1, functionCode: 10, isCompressed: false, body: Data(utf8("hi"))),
        SevenByteHeaderFrame(version: 2, functionCode: 0x0102, isCompressed: true, body: text(2000, 3)),
        SevenByteHeaderFrame(version: 3, functionCode: 0xFFFF, isCompressed: false, body: Data()),
        SevenByteHeaderFrame(version: 1, functionCode: 1, isCompressed: true, body: pattern(70000, 2))
    ]
    static let eight = [
        EightByteHeaderFrame(serviceID: 1, body: Data(utf8("hi"))), EightByteHeaderFrame(serviceID: 0xDEAD_BEEF, body: Data()),
        EightByteHeaderFrame(serviceID: 7, body: pattern(300, 1)), EightByteHeaderFrame(serviceID: 2, body: pattern(70000, 2))
    ]
    static let json = [
        JSONHeaderFrame(body: Data(utf8("hello"))),
        JSONHeaderFrame(fields: ["to": .string("bob"), "n": .number(3)], body: pattern(300, 1)),
        JSONHeaderFrame(fields: ["type": .string("chat"), "from": .string("ann")], body: Data()),
        JSONHeaderFrame(body: text(5000, 2))
    ]

    struct InteropLogin: Codable, Equatable {
        var version: UInt16
        var user: String
    }

    struct InteropMessage: Codable, Equatable {
        var id: UInt64
        var user: String
        var admin: Bool
        var room: Int32?
        var tags: [String]
        var ratio: Double
        var blob: Data
        var scores: [Int16?]
        var level: Int8
        var reply: InteropLogin?
    }

    static let binary = [
        InteropMessage(
            id: 1, user: "ann", admin: false, room: 7, tags: ["a", ""], ratio: 0.5, blob: Data([0x00, 0xFF]),
            scores: [1, nil, -2], level: -1, reply: nil),
        InteropMessage(
            id: .max, user: "bé", admin: true, room: nil, tags: [], ratio: -1.25, blob: Data(), scores: [],
            level: 127, reply: InteropLogin(version: 3, user: "bob")),
        InteropMessage(
            id: 42, user: "", admin: true, room: Int32.min, tags: [String(repeating: "x", count: 300)],
            ratio: 1e300, blob: pattern(1000, 5), scores: [nil], level: 0, reply: InteropLogin(version: 0, user: ""))
    ]

    // MARK: - Running the script

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/framing_interop.py")

    struct ScriptFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `python3 framing_interop.py arguments…` with `input` on its standard input; returns its output.
    /// The wait runs on a thread of its own: blocking one of Swift's cooperative threads (two on this
    /// machine) for Python's start-up starved the suite's socket tests past their 10 s limits.
    static func python(_ arguments: [String], input: Data = Data()) async throws -> Data {
        try await runOnAThread { try runPython(arguments, input: input) }
    }

    private static func runPython(_ arguments: [String], input: Data) throws -> Data {
        let process = try ChildProcess("python3", [script.path] + arguments)
        defer { process.stop() }
        process.write(input)
        process.closeInput()
        guard let status = process.waitForExit(within: .seconds(60)) else {
            throw ScriptFailed(description: "framing_interop.py \(arguments) did not finish")
        }
        let output = process.allOutput
        guard status == 0 else {
            throw ScriptFailed(description: "framing_interop.py \(arguments) exited \(status): \(String(decoding: output, as: UTF8.self))")
        }
        return output
    }

    static func produce(_ codec: String) async throws -> [UInt8] { [UInt8](try await python(["produce", codec])) }

    static func consume(_ codec: String, _ bytes: Data) async throws -> [String] {
        // One line per message, each ended by "\n"; an empty body is an empty line.
        let lines = String(decoding: try await python(["consume", codec], input: bytes), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return lines.last == "" ? lines.dropLast() : lines
    }

    static func encodeAll<E: FrameEncoder>(_ encoder: E, _ messages: [E.Message]) throws -> Data {
        var out = Data()
        for message in messages { try encoder.encode(message, into: &out) }
        return out
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Length field

    @Test func length_prefixed_frames_from_python_decode() async throws {
        DecoderVerifier.verify(
            { LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 17) },
            bytes: try await Self.produce("length-prefixed"), expecting: Self.bodies, randomCuttings: 20)
    }

    @Test func length_prefixed_frames_to_python() async throws {
        let wire = try Self.encodeAll(LengthFieldPrepender(lengthFieldLength: 4), Self.bodies)
        #expect(try await Self.consume("length-prefixed", wire) == Self.bodies.map(Self.hex))
    }

    @Test func little_endian_inclusive_lengths_from_and_to_python() async throws {
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldLength: 2, byteOrder: .littleEndian,
                    lengthAdjustment: -2, initialBytesToStrip: 2)
            }, bytes: try await Self.produce("length-le16-inclusive"), expecting: Array(Self.bodies.prefix(3)))
        let encoder = LengthFieldPrepender(lengthFieldLength: 2, byteOrder: .littleEndian, lengthIncludesLengthFieldLength: true)
        #expect(
            try await Self.consume("length-le16-inclusive", try Self.encodeAll(encoder, Array(Self.bodies.prefix(3))))
                == Self.bodies.prefix(3).map(Self.hex))
    }

    @Test func netty_sixth_example_headers_from_python_decode() async throws {
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 1, lengthFieldLength: 2,
                    lengthAdjustment: 1, initialBytesToStrip: 3)
            }, bytes: try await Self.produce("length-netty6"), expecting: Self.bodies.prefix(3).map { Data([0xFE]) + $0 })
    }

    // MARK: - Delimiter and fixed length

    @Test func crlf_lines_from_and_to_python() async throws {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder(maxFrameLength: 8192, delimiter: DelimiterBasedFrameDecoder.crlf) },
            bytes: try await Self.produce("delimiter-crlf"), expecting: Self.textBodies, randomCuttings: 20)
        let wire = try Self.encodeAll(DelimiterFrameEncoder(delimiter: DelimiterBasedFrameDecoder.crlf), Self.textBodies)
        #expect(try await Self.consume("delimiter-crlf", wire) == Self.textBodies.map(Self.hex))
    }

    @Test func mixed_crlf_and_lf_lines_from_python_decode() async throws {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder.lines(maxFrameLength: 8192) },
            bytes: try await Self.produce("lines"), expecting: Self.textBodies, randomCuttings: 20)
    }

    @Test func fixed_length_frames_from_and_to_python() async throws {
        DecoderVerifier.verify(
            { FixedLengthFrameDecoder(frameLength: 8) }, bytes: try await Self.produce("fixed-8"),
            expecting: Self.fixedBodies)
        let wire = try Self.encodeAll(FixedLengthFrameEncoder(frameLength: 8), Self.fixedBodies)
        #expect(try await Self.consume("fixed-8", wire) == Self.fixedBodies.map(Self.hex))
    }

    // MARK: - Headers

    @Test func seven_byte_frames_compressed_by_python_zlib_decode() async throws {
        DecoderVerifier.verify(
            { SevenByteHeaderFrameDecoder(acceptedVersions: [1, 2, 3]) }, bytes: try await Self.produce("seven-byte"),
            expecting: Self.seven,
            randomCuttings: 20)
    }

    @Test func seven_byte_frames_compressed_by_our_zlib_decompress_in_python() async throws {
        let wire = try Self.encodeAll(SevenByteHeaderFrameEncoder(), Self.seven)
        #expect(
            try await Self.consume("seven-byte", wire)
                == Self.seven.map {
                    "\($0.version) \($0.functionCode) \($0.isCompressed ? 1 : 0) \(Self.hex($0.body))"
                })
    }

    @Test func eight_byte_frames_from_and_to_python() async throws {
        DecoderVerifier.verify(
            { EightByteHeaderFrameDecoder() }, bytes: try await Self.produce("eight-byte"), expecting: Self.eight,
            randomCuttings: 20)
        let wire = try Self.encodeAll(EightByteHeaderFrameEncoder(), Self.eight)
        #expect(try await Self.consume("eight-byte", wire) == Self.eight.map { "\($0.serviceID) \(Self.hex($0.body))" })
    }

    @Test func eight_byte_frames_with_gzip_bodies_from_and_to_python() async throws {
        let gzip = CompressionTransform(format: .gzip)
        DecoderVerifier.verify(
            { EightByteHeaderFrameDecoder(transform: gzip) }, bytes: try await Self.produce("eight-byte-gzip"),
            expecting: Self.eight, randomCuttings: 20)
        let wire = try Self.encodeAll(EightByteHeaderFrameEncoder(transform: gzip), Self.eight)
        #expect(try await Self.consume("eight-byte-gzip", wire) == Self.eight.map { "\($0.serviceID) \(Self.hex($0.body))" })
    }

    @Test func json_header_frames_from_python_decode_pretty_compact_number_or_string_sizes() async throws {
        DecoderVerifier.verify(
            { JSONHeaderFrameDecoder(maxBodyLength: 8192) }, bytes: try await Self.produce("json-header"),
            expecting: Self.json, randomCuttings: 20)
    }

    @Test(arguments: [JSONHeaderFrameEncoder.SizeStyle.number, .string])
    func json_header_frames_to_python(sizeStyle: JSONHeaderFrameEncoder.SizeStyle) async throws {
        let wire = try Self.encodeAll(JSONHeaderFrameEncoder(sizeStyle: sizeStyle), Self.json)
        #expect(
            try await Self.consume("json-header", wire) == [
                "{} \(Self.hex(Self.json[0].body))",
                #"{"n":3,"to":"bob"} "# + Self.hex(Self.json[1].body),
                #"{"from":"ann","type":"chat"} "#,
                "{} \(Self.hex(Self.json[3].body))"
            ])
    }

    // MARK: - Binary message models

    @Test func binary_models_from_python_decode() async throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 16))
        reader.append(Data(try await Self.produce("binary")))
        var messages: [InteropMessage] = []
        while let frame = try reader.nextFrame() { messages.append(try BinaryDecoder().decode(InteropMessage.self, from: frame)) }
        #expect(try reader.finish() == nil)
        #expect(messages == Self.binary)
    }

    @Test func binary_models_to_python() async throws {
        var wire = Data()
        for message in Self.binary {
            try LengthFieldPrepender(lengthFieldLength: 4).encode(try BinaryEncoder().encode(message), into: &wire)
        }
        #expect(
            try await Self.consume("binary", wire) == [
                #"1 "ann" False 7 ["a", ""] 0.5 00ff [1, None, -2] -1 None"#,
                #"18446744073709551615 "b\u00e9" True None [] -1.25  [] 127 (3, 'bob')"#,
                #"42 "" True -2147483648 [""# + String(repeating: "x", count: 300) + #""] 1e+300 "#
                    + Self.hex(Self.pattern(1000, 5)) + #" [None] 0 (0, '')"#
            ])
    }
}
