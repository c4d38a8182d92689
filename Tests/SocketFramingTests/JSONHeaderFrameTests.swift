import Foundation
import SocketFraming
import TestSupport
import Testing

/// The JSON header ended by CRLF, then `size` bytes of body (article 000, MISSION.md M3.3).
@Suite(.cpuBound) struct JSONHeaderFrameTests {
    func frames(_ bytes: String, _ decoder: JSONHeaderFrameDecoder = JSONHeaderFrameDecoder()) throws(FramingError) -> [JSONHeaderFrame] {
        var reader = FrameReader(decoder: decoder)
        reader.append(Data(utf8(bytes)))
        return try drain(&reader)
    }

    @Test func the_decoder_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(decoder: JSONHeaderFrameDecoder())
        reader.append(Data(utf8("{\"size")))
        #expect(try drain(&reader) == [])
        reader.append(Data(utf8("\":2,\"to\":\"bob\"}\r\nh")))
        #expect(try drain(&reader) == [])
        reader.append(Data(utf8("i{\"size\":\"0\"}\r\n")))
        #expect(
            try drain(&reader) == [
                JSONHeaderFrame(fields: ["to": .string("bob")], body: Data(utf8("hi"))),
                JSONHeaderFrame(body: Data())
            ])
        #expect(try reader.finish() == nil)
    }

    @Test func the_articles_pretty_printed_header_with_a_string_size_decodes() throws {
        // NSJSONWritingPrettyPrinted output of @{@"size": @"12"}, then CRLF (article 000's dataWithHeader:).
        let header = "{\n  \"size\" : \"12\"\n}\r\n"
        #expect(try frames(header + "{\"data\":\"x\"}") == [JSONHeaderFrame(body: Data(utf8("{\"data\":\"x\"}")))])
    }

    @Test func every_other_key_is_handed_to_the_application() throws {
        let header = #"{"size":1,"s":"x","n":-2.5,"i":7,"t":true,"f":false,"z":null,"a":[1,"b"],"o":{"k":{}}}"#
        #expect(
            try frames(header + "\r\n!") == [
                JSONHeaderFrame(
                    fields: [
                        "s": .string("x"), "n": .number(-2.5), "i": .number(7), "t": .bool(true), "f": .bool(false), "z": .null,
                        "a": .array([.number(1), .string("b")]), "o": .object(["k": .object([:])])
                    ], body: Data(utf8("!")))
            ])
    }

    @Test func the_encoder_documentation_example_encodes_as_drawn() throws {
        let message = JSONHeaderFrame(fields: ["to": .string("bob")], body: Data(utf8("hi")))
        #expect(try JSONHeaderFrameEncoder().encode(message) == Data(utf8("{\"size\":2,\"to\":\"bob\"}\r\nhi")))
        #expect(
            try JSONHeaderFrameEncoder(sizeStyle: .string).encode(message)
                == Data(utf8("{\"size\":\"2\",\"to\":\"bob\"}\r\nhi")))
        #expect(try JSONHeaderFrameEncoder().encode(JSONHeaderFrame(body: Data())) == Data(utf8("{\"size\":0}\r\n")))
        #expect(
            try JSONHeaderFrameEncoder(sizeStyle: .string).encode(JSONHeaderFrame(body: Data()))
                == Data(utf8("{\"size\":\"0\"}\r\n")))
    }

    @Test func the_encoder_sorts_keys_escapes_control_characters_and_replaces_a_size_field() throws {
        let message = JSONHeaderFrame(
            fields: ["size": .number(99), "b": .string("a\r\nb/c"), "a": .bool(true)],
            body: Data(utf8("xyz")))
        #expect(
            try JSONHeaderFrameEncoder().encode(message)
                == Data(utf8(#"{"size":3,"a":true,"b":"a\r\nb/c"}"# + "\r\nxyz")))
    }

    @Test func the_encoder_refuses_a_number_json_cannot_write() {
        #expect(throws: FramingError.malformedHeader("a field holds a value JSON cannot represent (NaN or infinity)")) {
            try JSONHeaderFrameEncoder().encode(JSONHeaderFrame(fields: ["x": .number(.infinity)], body: Data()))
        }
    }

    @Test(arguments: [
        ("{\"size\":2\r\nhi", "header is not valid JSON"),
        ("\r\n", "header is not valid JSON"),
        ("[1]\r\n", "header is not a JSON object"),
        ("\"size\"\r\n", "header is not a JSON object"),
        ("{\"length\":2}\r\nhi", "header has no \"size\""),
        ("{\"size\":-1}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":1.5}\r\nab", "\"size\" is not a non-negative integer"),
        ("{\"size\":\"12a\"}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":\" 1\"}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":\"\"}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":\"-1\"}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":true}\r\n", "\"size\" is not a non-negative integer"),
        ("{\"size\":null}\r\n", "\"size\" is not a non-negative integer")
    ])
    func a_malformed_header_is_a_typed_error(wire: String, reason: String) {
        #expect(throws: FramingError.malformedHeader(reason)) { try frames(wire) }
    }

    @Test func a_header_that_is_not_utf8_is_malformed() {
        var reader = FrameReader(decoder: JSONHeaderFrameDecoder())
        reader.append(Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D, 0x0D, 0x0A]))
        #expect(throws: FramingError.malformedHeader("header is not valid JSON")) { try reader.nextFrame() }
    }

    @Test func a_size_over_max_body_length_fails_when_the_header_arrives() {
        let decoder = JSONHeaderFrameDecoder(maxBodyLength: 10)
        #expect(throws: Never.self) { try frames("{\"size\":10}\r\n0123456789", decoder) }
        #expect(throws: FramingError.frameTooLong(length: 11, maxFrameLength: 10)) { try frames("{\"size\":11}\r\n", decoder) }
        #expect(throws: FramingError.frameTooLong(length: 11, maxFrameLength: 10)) { try frames("{\"size\":\"11\"}\r\n", decoder) }
        #expect(throws: FramingError.frameTooLong(length: Int.max, maxFrameLength: 10)) {
            try frames("{\"size\":\"99999999999999999999999\"}\r\n", decoder)
        }
        #expect(throws: FramingError.frameTooLong(length: Int.max, maxFrameLength: 10)) { try frames("{\"size\":1e300}\r\n", decoder) }
    }

    @Test func a_header_longer_than_max_header_length_fails_before_its_end_arrives() throws {
        let decoder = JSONHeaderFrameDecoder(maxHeaderLength: 10)
        #expect(try frames("{\"size\":0}\r\n", decoder) == [JSONHeaderFrame(body: Data())])  // exactly 10 bytes
        var reader = FrameReader(decoder: decoder)
        reader.append(Data(utf8("{\"size\": 0}")))  // 11 bytes, the last may begin the CRLF
        #expect(try reader.nextFrame() == nil)
        reader.append(Data(utf8("\r")))
        #expect(throws: FramingError.headerTooLong(length: 11, maxHeaderLength: 10)) { try reader.nextFrame() }
    }

    @Test func a_header_and_body_cut_anywhere_decode_the_same() {
        let wire = utf8("{\n  \"size\" : \"3\"\n}\r\nabc{\"size\":0,\"k\":[true]}\r\n")
        DecoderVerifier.verify(
            { JSONHeaderFrameDecoder() }, bytes: wire,
            expecting: [
                JSONHeaderFrame(body: Data(utf8("abc"))), JSONHeaderFrame(fields: ["k": .array([.bool(true)])], body: Data())
            ])
    }

    @Test func finishing_inside_a_header_or_a_body_is_a_truncated_frame() throws {
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 6)) {
            var reader = FrameReader(decoder: JSONHeaderFrameDecoder())
            reader.append(Data(utf8("{\"size")))
            _ = try reader.finish()
        }
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 13)) {
            var reader = FrameReader(decoder: JSONHeaderFrameDecoder())
            reader.append(Data(utf8("{\"size\":2}\r\nh")))
            _ = try reader.finish()
        }
    }

    @Test func header_values_nest_512_deep_and_no_deeper() throws {
        func header(depth: Int) -> String {
            "{\"size\":0,\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}\r\n"
        }
        let decoder = JSONHeaderFrameDecoder(maxHeaderLength: 8192)
        #expect(try frames(header(depth: 512), decoder).count == 1)
        #expect(throws: FramingError.malformedHeader("header is not valid JSON")) { try frames(header(depth: 513), decoder) }
        #expect(throws: FramingError.malformedHeader("header is not valid JSON")) { try frames(header(depth: 4000), decoder) }
    }

    @Test func strings_decode_every_escape_and_surrogate_pairs() throws {
        let header = #"{"size":0,"s":"q\"b\\s\/b\bf\fn\nr\rt\t\u00e9\ud83d\ude00é"}"#
        #expect(try frames(header + "\r\n") == [JSONHeaderFrame(fields: ["s": .string("q\"b\\s/b\u{8}f\u{C}n\nr\rt\té😀é")], body: Data())])
    }

    @Test(arguments: [
        #"{"size":0,"s":"\ud83d"}"#,  // a lone high surrogate
        #"{"size":0,"s":"\ude00"}"#,  // a lone low surrogate
        #"{"size":0,"s":"\x41"}"#,  // no such escape
        #"{"size":0,"s":"\u12"}"#,  // short \u escape
        "{\"size\":0,\"s\":\"tab\there\"}",  // a raw control character
        #"{"size":01}"#,  // a leading zero
        #"{"size":1.}"#, #"{"size":.5}"#, #"{"size":1e}"#, #"{"size":-}"#, #"{"size":+1}"#,
        #"{"size":0,}"#, #"{"size":0 "a":1}"#, #"{"size":0}x"#, #"{size:0}"#, #"{'size':0}"#,
        #"{"size":0,"a":[1,]}"#, #"{"size":0,"a":tru}"#, #"{"size":0,"a":nul}"#, #"{"size":0,"n":1e999}"#,
        #"{"size":0,"s":"open}"#
    ])
    func invalid_json_is_a_malformed_header(header: String) {
        #expect(throws: FramingError.malformedHeader("header is not valid JSON")) { try frames(header + "\r\n") }
    }

    @Test func whitespace_around_tokens_and_exponents_are_json() throws {
        #expect(
            try frames(" {\t\"size\" :\n 1E0 , \"x\" : [ -0.5e+1 , { } ] }\r\nz")
                == [JSONHeaderFrame(fields: ["x": .array([.number(-5), .object([:])])], body: Data(utf8("z")))])
    }

    @Test func a_duplicate_key_keeps_its_last_value() throws {
        #expect(
            try frames(#"{"size":5,"size":1,"k":1,"k":2}"# + "\r\nz") == [JSONHeaderFrame(fields: ["k": .number(2)], body: Data(utf8("z")))]
        )
    }

    @Test func a_compressed_body_carries_the_compressed_size() throws {
        let body = Data(repeating: 0x7A, count: 500)
        let compressed = try Zlib.compress(body)
        let wire = try JSONHeaderFrameEncoder(transform: CompressionTransform()).encode(JSONHeaderFrame(body: body))
        #expect(wire == Data(utf8("{\"size\":\(compressed.count)}\r\n")) + compressed)
        var reader = FrameReader(decoder: JSONHeaderFrameDecoder(transform: CompressionTransform()))
        reader.append(wire)
        #expect(try reader.nextFrame() == JSONHeaderFrame(body: body))
    }

    static func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0...(depth < 2 ? 6 : 4), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 8)
        case 3, 4:
            return .string(
                String(
                    decoding: random.bytes(
                        count: Int.random(in: 0...12, using: &random),
                        from: utf8("ab\r\n\"\\/é{}")), as: UTF8.self))
        case 5: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            return .object(
                Dictionary(
                    uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { index in
                        ("k\(index)", randomValue(&random, depth: depth + 1))
                    }))
        }
    }

    @Test(arguments: [JSONHeaderFrameEncoder.SizeStyle.number, .string])
    func random_frames_round_trip_under_random_cuts(sizeStyle: JSONHeaderFrameEncoder.SizeStyle) {
        var random = SplitMix64(seed: sizeStyle == .number ? 1 : 2)
        let messages = (0..<12).map { _ in
            JSONHeaderFrame(
                fields: Dictionary(
                    uniqueKeysWithValues: (0..<Int.random(in: 0...4, using: &random)).map { index in
                        ("f\(index)", Self.randomValue(&random))
                    }),
                body: Data(random.bytes(count: Int.random(in: 0...60, using: &random), from: utf8("{}\r\n\"x"))))
        }
        DecoderVerifier.verifyRoundTrip(
            encoder: JSONHeaderFrameEncoder(sizeStyle: sizeStyle), { JSONHeaderFrameDecoder() },
            messages: messages, randomCuttings: 40)
    }
}
