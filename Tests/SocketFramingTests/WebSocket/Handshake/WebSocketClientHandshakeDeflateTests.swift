import SocketFraming
import Testing

/// `WebSocketClientHandshake` with permessage-deflate offered: the offer in the request and the checks
/// of the server's answer (RFC 6455 §4.1, §9.1; RFC 7692 §5, §7.1), refusals carrying close code 1010.
@Suite struct WebSocketClientHandshakeDeflateTests {
    typealias Base = WebSocketClientHandshakeTests

    static func handshake(
        _ deflate: PerMessageDeflate.ClientConfiguration? = PerMessageDeflate.ClientConfiguration()
    )
        throws -> WebSocketClientHandshake
    {
        WebSocketClientHandshake(url: try WebSocketURL("ws://server.example.com/chat"), deflate: deflate, key: Base.key)
    }

    static func answer(extensions: String) -> HTTPResponseHead {
        Base.answer(Base.good + [("Sec-WebSocket-Extensions", extensions)])
    }

    @Test func the_offer_is_written_after_the_handshakes_own_fields() throws {
        let handshake = try Self.handshake()
        #expect(handshake.request.headers.first("Sec-WebSocket-Extensions") == "permessage-deflate; client_max_window_bits")
        #expect(handshake.extensions == [PerMessageDeflate.ClientConfiguration().offer])
    }

    @Test func an_acceptable_answer_gives_the_agreement() throws {
        let accepted = try Self.handshake().validate(
            Self.answer(extensions: "permessage-deflate; server_no_context_takeover; client_max_window_bits=12"))
        #expect(accepted.deflate == PerMessageDeflate.Agreement(serverNoContextTakeover: true, clientMaxWindowBits: 12))
        #expect(accepted.extensions.map(\.description) == ["permessage-deflate; server_no_context_takeover; client_max_window_bits=12"])
    }

    @Test func an_answer_without_the_extension_opens_without_compression() throws {
        let accepted = try Self.handshake().validate(Base.answer(Base.good))
        #expect(accepted.deflate == nil && accepted.extensions == [])
    }

    @Test(arguments: [
        (
            "permessage-deflate; client_max_window_bits=10",
            WebSocketClientHandshakeError.unacceptableExtension(.parameterNotOffered(name: "client_max_window_bits"))
        ),
        ("permessage-deflate; foo", .unacceptableExtension(.unknownParameter(name: "foo"))),
        ("permessage-deflate, permessage-deflate", .repeatedExtension("permessage-deflate")),
        ("x-webkit-deflate-frame", .unofferedExtension("x-webkit-deflate-frame"))
    ])
    func an_answer_that_does_not_fit_the_offer_is_refused_with_1010(extensions: String, error: WebSocketClientHandshakeError) throws {
        let handshake = try Self.handshake(PerMessageDeflate.ClientConfiguration(offerClientMaxWindowBits: false))
        #expect(throws: error) { try handshake.validate(Self.answer(extensions: extensions)) }
        #expect(error.closeCode == .mandatoryExtension)
    }

    @Test func the_other_refusals_send_no_close_frame() {
        #expect(WebSocketClientHandshakeError.unexpectedStatus(403).closeCode == nil)
        #expect(WebSocketClientHandshakeError.acceptMismatch(nil).closeCode == nil)
    }

    @Test func without_an_offer_a_permessage_deflate_answer_is_an_unoffered_extension() throws {
        #expect(throws: WebSocketClientHandshakeError.unofferedExtension("permessage-deflate")) {
            try Self.handshake(nil).validate(Self.answer(extensions: "permessage-deflate"))
        }
    }
}
