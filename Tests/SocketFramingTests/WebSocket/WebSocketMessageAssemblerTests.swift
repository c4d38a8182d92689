import Foundation
import SocketFraming
import TestSupport
import Testing

/// `WebSocketMessageAssembler`, fed by `WebSocketFrameDecoder` from bytes cut every way.
@Suite(.cpuBound) struct WebSocketMessageAssemblerTests {
    /// Server-side bytes of `frames`, masked with a fixed key as a client sends them.
    static func clientBytes(_ frames: [WebSocketFrame]) -> [UInt8] {
        var generator = FixedGenerator(value: 0x37FA_213D)
        var out = Data()
        for frame in frames {
            try? WebSocketFrameEncoder(role: .client).encode(frame, into: &out, using: &generator)
        }
        return [UInt8](out)
    }

    /// Feeds `frames` (as a client's bytes) in every cutting and expects `outcome` from each.
    static func expect(
        _ frames: [WebSocketFrame], _ outcome: WebSocketFeedOutcome, maxMessageSize: Int = 1 << 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let bytes = clientBytes(frames)
        for (name, chunks) in everyCutting(of: bytes.count) {
            let got = feedMessages(bytes, chunkSizes: chunks, assembler: WebSocketMessageAssembler(maxMessageSize: maxMessageSize))
            #expect(got == outcome, "\(name)", sourceLocation: sourceLocation)
        }
    }

    static let kosme: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]

    @Test func fragments_are_joined_with_control_frames_passed_through_between_them() {
        Self.expect(
            [
                WebSocketFrame(fin: false, opcode: .text, payload: data("Hel")),
                WebSocketFrame(opcode: .ping, payload: data("p")),
                WebSocketFrame(fin: false, opcode: .continuation, payload: data("l")),
                WebSocketFrame(opcode: .pong),
                WebSocketFrame(opcode: .continuation, payload: data("o")),
                WebSocketFrame(fin: false, opcode: .binary, payload: Data([1])),
                WebSocketFrame(opcode: .continuation, payload: Data([2, 3])),
                WebSocketFrame(opcode: .text),
                WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8]) + data("bye"))
            ],
            WebSocketFeedOutcome(messages: [
                .ping(data("p")), .pong(Data()), .text("Hello"), .binary(Data([1, 2, 3])), .text(""),
                .close(WebSocketClosePayload(code: .normalClosure, reason: "bye"))
            ]))
    }

    @Test func a_continuation_without_a_message_is_refused() {
        Self.expect(
            [WebSocketFrame(opcode: .continuation, payload: data("x"))], WebSocketFeedOutcome(error: .unexpectedContinuation))
        Self.expect(
            [WebSocketFrame(opcode: .text, payload: data("a")), WebSocketFrame(opcode: .continuation)],
            WebSocketFeedOutcome(messages: [.text("a")], error: .unexpectedContinuation))
        #expect(WebSocketProtocolError.unexpectedContinuation.closeCode == .protocolError)
    }

    @Test func a_new_data_frame_while_a_message_is_open_is_refused() {
        Self.expect(
            [WebSocketFrame(fin: false, opcode: .text, payload: data("a")), WebSocketFrame(opcode: .binary)],
            WebSocketFeedOutcome(error: .dataFrameInsideMessage(.binary)))
        Self.expect(
            [WebSocketFrame(fin: false, opcode: .binary), WebSocketFrame(fin: false, opcode: .text)],
            WebSocketFeedOutcome(error: .dataFrameInsideMessage(.text)))
        #expect(WebSocketProtocolError.dataFrameInsideMessage(.text).closeCode == .protocolError)
    }

    @Test func a_message_over_max_message_size_is_refused_before_its_last_fragment_is_kept() {
        Self.expect(
            [
                WebSocketFrame(fin: false, opcode: .binary, payload: Data(count: 6)),
                WebSocketFrame(opcode: .continuation, payload: Data(count: 5))
            ],
            WebSocketFeedOutcome(error: .messageTooLarge(length: 11, maxMessageSize: 10)), maxMessageSize: 10)
        Self.expect(
            [
                WebSocketFrame(fin: false, opcode: .binary, payload: Data(count: 6)),
                WebSocketFrame(opcode: .continuation, payload: Data(count: 4))
            ],
            WebSocketFeedOutcome(messages: [.binary(Data(count: 10))]), maxMessageSize: 10)
        Self.expect(
            [WebSocketFrame(opcode: .text, payload: Data(count: 11))],
            WebSocketFeedOutcome(error: .messageTooLarge(length: 11, maxMessageSize: 10)), maxMessageSize: 10)
        #expect(WebSocketProtocolError.messageTooLarge(length: 11, maxMessageSize: 10).closeCode == .messageTooBig)
        #expect(WebSocketMessageAssembler().maxMessageSize == 64 * 1024 * 1024)
    }

    /// Autobahn 6.4.1: the second of three fragments holds a code point over U+10FFFF; the failure comes
    /// with that fragment, before the third arrives.
    @Test func invalid_utf8_fails_fast_at_the_fragment_that_holds_it() {
        let frames = [
            WebSocketFrame(fin: false, opcode: .text, payload: Data(Self.kosme)),
            WebSocketFrame(fin: false, opcode: .continuation, payload: Data([0xF4, 0x90, 0x80, 0x80])),
            WebSocketFrame(opcode: .continuation, payload: data("edited"))
        ]
        let bytes = Self.clientBytes(Array(frames.prefix(2)))
        #expect(feedMessages(bytes) == WebSocketFeedOutcome(error: .invalidUTF8(offset: 12)))
        Self.expect(frames, WebSocketFeedOutcome(error: .invalidUTF8(offset: 12)))
        #expect(WebSocketProtocolError.invalidUTF8(offset: 12).closeCode == .invalidPayloadData)
    }

    /// Autobahn 6.6-style: κόσμε cut into fragments at every byte, so sequences are split across them.
    @Test func a_character_split_across_fragments_is_valid() {
        for cut in 1..<Self.kosme.count {
            Self.expect(
                [
                    WebSocketFrame(fin: false, opcode: .text, payload: Data(Self.kosme.prefix(cut))),
                    WebSocketFrame(opcode: .continuation, payload: Data(Self.kosme.dropFirst(cut)))
                ], WebSocketFeedOutcome(messages: [.text("κόσμε")]))
        }
        let oneByteFragments = Self.kosme.enumerated().map { index, byte in
            WebSocketFrame(fin: index == Self.kosme.count - 1, opcode: index == 0 ? .text : .continuation, payload: Data([byte]))
        }
        Self.expect(oneByteFragments, WebSocketFeedOutcome(messages: [.text("κόσμε")]))
    }

    @Test func a_text_message_ending_inside_a_sequence_is_invalid() {
        Self.expect(
            [WebSocketFrame(fin: false, opcode: .text, payload: data("ab")), WebSocketFrame(opcode: .continuation, payload: Data([0xCE]))],
            WebSocketFeedOutcome(error: .invalidUTF8(offset: 3)))
        Self.expect(
            [WebSocketFrame(opcode: .text, payload: Data([0xF0, 0x9F, 0x98]))], WebSocketFeedOutcome(error: .invalidUTF8(offset: 3)))
        // Binary messages are not checked.
        Self.expect([WebSocketFrame(opcode: .binary, payload: Data([0xFF]))], WebSocketFeedOutcome(messages: [.binary(Data([0xFF]))]))
    }

    @Test func autobahn_6_3_1_invalid_in_the_middle_of_a_single_frame() {
        let payload = Self.kosme + [0xED, 0xA0, 0x80] + utf8("edited")
        Self.expect([WebSocketFrame(opcode: .text, payload: Data(payload))], WebSocketFeedOutcome(error: .invalidUTF8(offset: 12)))
    }

    @Test func control_frames_built_by_hand_are_checked_too() throws {
        var assembler = WebSocketMessageAssembler()
        #expect(throws: WebSocketProtocolError.fragmentedControlFrame(.ping)) {
            try assembler.append(WebSocketFrame(fin: false, opcode: .ping))
        }
        #expect(throws: WebSocketProtocolError.controlFrameTooLong(length: 126)) {
            try assembler.append(WebSocketFrame(opcode: .pong, payload: Data(count: 126)))
        }
        #expect(!assembler.isAssemblingMessage)
        #expect(try assembler.append(WebSocketFrame(fin: false, opcode: .binary)) == nil)
        #expect(assembler.isAssemblingMessage)
    }

    @Test func a_bad_close_payload_fails_with_its_code() {
        Self.expect([WebSocketFrame(opcode: .close, payload: Data([0x03]))], WebSocketFeedOutcome(error: .closePayloadTooShort))
        Self.expect([WebSocketFrame(opcode: .close, payload: Data([0x03, 0xED]))], WebSocketFeedOutcome(error: .invalidCloseCode(1005)))
        Self.expect(
            [WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8, 0xCE]))], WebSocketFeedOutcome(error: .invalidCloseReason(offset: 1))
        )
        Self.expect([WebSocketFrame(opcode: .close)], WebSocketFeedOutcome(messages: [.close(.empty)]))
    }
}
