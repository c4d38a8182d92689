import Foundation
import SocketFraming
import TestSupport
import Testing

/// `BinaryEncoder` and `BinaryDecoder`: message models field by field, in declaration order (article 004,
/// MISSION.md M3.7), byte for byte as docs/BINARY-ENCODING.md describes them.
@Suite(.cpuBound) struct BinaryCodingTests {
    struct Login: Codable, Equatable {
        var version: UInt16
        var user: String
        var admin: Bool
        var room: Int32?
    }

    /// The example of `BinaryEncoder`'s documentation and docs/BINARY-ENCODING.md.
    static let login = Login(version: 1, user: "ann", admin: false, room: 7)
    static let loginBytes: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x61, 0x6E, 0x6E, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07]

    struct Primitives: Codable, Equatable {
        var i8: Int8, i16: Int16, i32: Int32, i64: Int64, int: Int
        var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, uint: UInt
        var i128: Int128, u128: UInt128
        var float: Float, double: Double, bool: Bool, string: String, data: Data, bytes: [UInt8]
    }

    enum Kind: UInt8, Codable, Equatable { case text = 1, image = 2 }

    struct Message: Codable, Equatable {
        var id: UInt64
        var from: Login
        var kind: Kind
        var tags: [String]
        var scores: [Int16?]
        var reply: Login?
        var nested: Int32??
        var meta: [String: Int8]
        var matrix: [[UInt8]]
    }

    enum Shape: Codable, Equatable { case circle(radius: Double), square(side: Double) }

    struct Empty: Codable, Equatable {}

    func encode<T: Encodable>(_ value: T, _ prefix: BinaryLengthPrefix = .uint32) throws(BinaryCodingError) -> [UInt8] {
        [UInt8](try BinaryEncoder(lengthPrefix: prefix).encode(value))
    }

    func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], _ decoder: BinaryDecoder = BinaryDecoder()) throws(BinaryCodingError) -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    @Test func the_documentation_example_encodes_and_decodes_byte_for_byte() throws {
        #expect(try encode(Self.login) == Self.loginBytes)
        #expect(try decode(Login.self, Self.loginBytes) == Self.login)
    }

    @Test func the_specification_examples_encode_byte_for_byte() throws {
        #expect(try encode(Self.login, .uint8) == [0x00, 0x01, 0x03, 0x61, 0x6E, 0x6E, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07])
        struct Nested: Codable { var id: UInt64; var from: Login; var tags: [String] }
        #expect(
            try encode(Nested(id: 9, from: Self.login, tags: ["a", ""]))
                == [0, 0, 0, 0, 0, 0, 0, 9] + Self.loginBytes + [0, 0, 0, 2, 0, 0, 0, 1, 0x61, 0, 0, 0, 0])
    }

    @Test func every_primitive_is_big_endian_in_its_width() throws {
        let value = Primitives(
            i8: -1, i16: -2, i32: 0x0102_0304, i64: -0x0102_0304_0506_0708, int: 5,
            u8: 0xAB, u16: 0xABCD, u32: 0xDEAD_BEEF, u64: 0x0102_0304_0506_0708, uint: 6,
            i128: -1, u128: 0x0102,
            float: 1.5, double: -2, bool: true, string: "é", data: Data([1, 2]), bytes: [3])
        let expected: [UInt8] =
            [0xFF] + [0xFF, 0xFE] + [0x01, 0x02, 0x03, 0x04]
            + [0xFE, 0xFD, 0xFC, 0xFB, 0xFA, 0xF9, 0xF8, 0xF8] + [0, 0, 0, 0, 0, 0, 0, 5]
            + [0xAB] + [0xAB, 0xCD] + [0xDE, 0xAD, 0xBE, 0xEF] + [1, 2, 3, 4, 5, 6, 7, 8] + [0, 0, 0, 0, 0, 0, 0, 6]
            + [UInt8](repeating: 0xFF, count: 16) + [UInt8](repeating: 0, count: 14) + [0x01, 0x02]
            + [0x3F, 0xC0, 0x00, 0x00] + [0xC0, 0, 0, 0, 0, 0, 0, 0] + [0x01]
            + [0, 0, 0, 2, 0xC3, 0xA9] + [0, 0, 0, 2, 1, 2] + [0, 0, 0, 1, 3]
        #expect(try encode(value) == expected)
        #expect(try decode(Primitives.self, expected) == value)
    }

    @Test func nested_structs_arrays_optionals_dictionaries_and_raw_enums() throws {
        let value = Message(
            id: 9, from: Self.login, kind: .image, tags: ["a", ""], scores: [1, nil], reply: nil,
            nested: .some(nil), meta: ["k": -1], matrix: [[1], []])
        let expected: [UInt8] =
            [0, 0, 0, 0, 0, 0, 0, 9] + Self.loginBytes + [0x02]
            + [0, 0, 0, 2] + [0, 0, 0, 1, 0x61] + [0, 0, 0, 0]
            + [0, 0, 0, 2] + [1, 0, 1] + [0]
            + [0]
            + [1, 0]
            + [0, 0, 0, 1] + [0, 0, 0, 1, 0x6B] + [0xFF]
            + [0, 0, 0, 2] + [0, 0, 0, 1, 1] + [0, 0, 0, 0]
        #expect(try encode(value) == expected)
        #expect(try decode(Message.self, expected) == value)
    }

    @Test(arguments: BinaryLengthPrefix.allCases)
    func the_length_prefix_width_is_configurable(prefix: BinaryLengthPrefix) throws {
        let bytes = try encode(["hi"], prefix)
        let width = prefix.byteCount
        #expect(bytes == [UInt8](repeating: 0, count: width - 1) + [1] + [UInt8](repeating: 0, count: width - 1) + [2, 0x68, 0x69])
        #expect(try decode([String].self, bytes, BinaryDecoder(lengthPrefix: prefix)) == ["hi"])
    }

    @Test func a_string_too_long_for_its_prefix_is_refused_with_its_offset() {
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 2, length: 256, maxLength: 255)) {
            try encode(Login(version: 1, user: String(repeating: "x", count: 256), admin: false, room: nil), .uint8)
        }
    }

    @Test func an_array_too_long_for_its_prefix_is_refused_at_its_count() {
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 0, length: 256, maxLength: 255)) {
            try encode([UInt16](repeating: 7, count: 256), .uint8)
        }
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 0, length: 256, maxLength: 255)) {
            try encode([[UInt8]](repeating: [], count: 256), .uint8)
        }
    }

    @Test func every_truncation_of_a_message_is_an_unexpected_end_where_the_input_stops() throws {
        #expect(throws: BinaryCodingError.unexpectedEnd(offset: 11, neededBytes: 4)) {
            try decode(Login.self, Array(Self.loginBytes.dropLast()))
        }
        #expect(throws: BinaryCodingError.unexpectedEnd(offset: 6, neededBytes: 3)) {
            try decode(Login.self, Array(Self.loginBytes.prefix(8)))
        }
        #expect(throws: BinaryCodingError.unexpectedEnd(offset: 0, neededBytes: 2)) { try decode(Login.self, []) }
        for count in 0..<Self.loginBytes.count {
            #expect(throws: BinaryCodingError.self) { try decode(Login.self, Array(Self.loginBytes.prefix(count))) }
        }
    }

    @Test func a_bool_or_presence_flag_other_than_0_or_1_is_an_invalid_value_at_its_offset() {
        var bytes = Self.loginBytes
        bytes[9] = 2
        #expect(throws: BinaryCodingError.invalidValue(offset: 9, reason: "Bool is 2, expected 0 or 1")) {
            try decode(Login.self, bytes)
        }
        bytes = Self.loginBytes
        bytes[10] = 5
        #expect(throws: BinaryCodingError.invalidValue(offset: 10, reason: "presence flag is 5, expected 0 or 1")) {
            try decode(Login.self, bytes)
        }
        #expect(throws: BinaryCodingError.invalidValue(offset: 4, reason: "presence flag is 2, expected 0 or 1")) {
            try decode([Int8?].self, [0, 0, 0, 1, 2])
        }
    }

    @Test func a_string_that_is_not_utf8_is_an_invalid_value_at_its_length() {
        #expect(throws: BinaryCodingError.invalidValue(offset: 2, reason: "string of 3 bytes is not valid UTF-8")) {
            try decode(Login.self, [0, 1, 0, 0, 0, 3, 0x61, 0xFF, 0x6E, 0, 0])
        }
    }

    @Test func a_length_over_the_maximum_is_refused_before_anything_is_allocated() {
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 2, length: 3, maxLength: 2)) {
            try decode(Login.self, Self.loginBytes, BinaryDecoder(maxLength: 2))
        }
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 0, length: 0xFFFF_FFFF, maxLength: 1 << 20)) {
            try decode(Data.self, [0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: BinaryCodingError.unexpectedEnd(offset: 4, neededBytes: 1000)) {
            try decode(Data.self, [0, 0, 0x03, 0xE8, 1, 2, 3])
        }
    }

    @Test func a_forged_count_of_empty_elements_is_bounded_by_max_length() {
        #expect(throws: BinaryCodingError.lengthTooLarge(offset: 0, length: 0x7FFF_FFFF, maxLength: 1 << 20)) {
            try decode([Empty].self, [0x7F, 0xFF, 0xFF, 0xFF])
        }
        #expect((try? decode([Empty].self, [0, 0, 0, 3])) == [Empty(), Empty(), Empty()])
    }

    @Test func bytes_after_the_value_are_trailing_bytes() {
        #expect(throws: BinaryCodingError.trailingBytes(offset: 15, count: 2)) { try decode(Login.self, Self.loginBytes + [0, 0]) }
    }

    @Test func a_raw_value_no_case_has_is_data_corrupted_at_the_value() {
        #expect(throws: BinaryCodingError.dataCorrupted(offset: 4, reason: "Cannot initialize Kind from invalid UInt8 value 9")) {
            try decode([Kind].self, [0, 0, 0, 2, 9, 1])
        }
    }

    @Test func a_duplicate_dictionary_key_is_an_invalid_value() {
        #expect(throws: BinaryCodingError.invalidValue(offset: 10, reason: "dictionary key a appears twice")) {
            try decode([String: UInt8].self, [0, 0, 0, 2, 0, 0, 0, 1, 0x61, 1, 0, 0, 0, 1, 0x61, 2])
        }
    }

    @Test func an_int_beyond_this_platform_is_an_invalid_value_only_on_32_bit_platforms() throws {
        #expect(try decode(Int.self, [0x80, 0, 0, 0, 0, 0, 0, 0]) == Int(Int64.min))
    }

    @Test func enums_with_associated_values_are_unsupported_on_decoding() throws {
        let bytes = try encode(Shape.circle(radius: 1))
        #expect(
            throws: BinaryCodingError.unsupported(
                offset: 0,
                reason: "the format has no keys, so keyed containers "
                    + "cannot list them (allKeys); enums with associated values are not supported")
        ) {
            try decode(Shape.self, bytes)
        }
    }

    @Test func errors_describe_themselves_with_the_offset() {
        #expect(
            BinaryCodingError.unexpectedEnd(offset: 5, neededBytes: 4).description
                == "at byte 5: needed 4 more bytes, the input ended")
        #expect(BinaryCodingError.trailingBytes(offset: 15, count: 2).offset == 15)
    }

    static func randomLogin(_ random: inout SplitMix64) -> Login {
        Login(
            version: UInt16.random(in: 0...UInt16.max, using: &random),
            user: String(decoding: random.bytes(count: Int.random(in: 0...20, using: &random), from: utf8("abé😀\0")), as: UTF8.self),
            admin: Bool.random(using: &random),
            room: Bool.random(using: &random) ? Int32.random(in: Int32.min...Int32.max, using: &random) : nil)
    }

    @Test(arguments: BinaryLengthPrefix.allCases)
    func random_messages_round_trip(prefix: BinaryLengthPrefix) throws {
        var random = SplitMix64(seed: UInt64(prefix.byteCount))
        for _ in 0..<200 {
            let value = Message(
                id: UInt64.random(in: 0...UInt64.max, using: &random), from: Self.randomLogin(&random),
                kind: Bool.random(using: &random) ? .text : .image,
                tags: (0..<Int.random(in: 0...4, using: &random)).map { "t\($0)" },
                scores: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    Bool.random(using: &random) ? Int16.random(in: Int16.min...Int16.max, using: &random) : nil
                },
                reply: Bool.random(using: &random) ? Self.randomLogin(&random) : nil,
                nested: [nil, .some(nil), .some(.some(Int32.random(in: 0...9, using: &random)))][Int.random(in: 0...2, using: &random)],
                meta: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { ("k\($0)", Int8($0)) }),
                matrix: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.bytes(count: Int.random(in: 0...5, using: &random)) })
            let bytes = try BinaryEncoder(lengthPrefix: prefix).encode(value)
            #expect(try BinaryDecoder(lengthPrefix: prefix).decode(Message.self, from: bytes) == value)
        }
    }

    @Test func models_travel_inside_frames_and_come_out_in_order() throws {
        var random = SplitMix64(seed: 77)
        let logins = (0..<20).map { _ in Self.randomLogin(&random) }
        let encoder = EightByteHeaderFrameEncoder()
        var stream = Data()
        for login in logins {
            try encoder.encode(EightByteHeaderFrame(serviceID: 1, body: try BinaryEncoder().encode(login)), into: &stream)
        }
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder())
        for byte in stream { reader.append(Data([byte])) }
        var decoded: [Login] = []
        while let frame = try reader.nextFrame() { decoded.append(try BinaryDecoder().decode(Login.self, from: frame.body)) }
        #expect(decoded == logins)
    }
}
