import SocketFraming
import Testing

/// `WebSocketExtension.parse`: RFC 6455 §9.1's grammar with RFC 7692 §5's offers.
@Suite struct WebSocketExtensionTests {
    @Test func offers_with_parameters_quoted_values_and_several_fields() {
        let parsed = WebSocketExtension.parse([
            "permessage-deflate; client_max_window_bits, permessage-deflate ;server_max_window_bits = \"10\" ; client_no_context_takeover",
            " , x-webkit-deflate-frame"
        ])
        #expect(
            parsed == [
                WebSocketExtension(name: "permessage-deflate", parameters: [.init(name: "client_max_window_bits")]),
                WebSocketExtension(
                    name: "permessage-deflate",
                    parameters: [.init(name: "server_max_window_bits", value: "10"), .init(name: "client_no_context_takeover")]),
                WebSocketExtension(name: "x-webkit-deflate-frame")
            ])
    }

    @Test func a_quoted_value_may_escape_characters_of_a_token() {
        #expect(
            WebSocketExtension.parse(["foo; bar=\"b\\az\""]) == [
                WebSocketExtension(name: "foo", parameters: [.init(name: "bar", value: "baz")])
            ])
    }

    @Test func no_field_and_empty_fields_are_no_extensions() {
        #expect(WebSocketExtension.parse([]) == [])
        #expect(WebSocketExtension.parse(["", " , "]) == [])
    }

    @Test(arguments: [
        "permessage-deflate;", "; a", "permessage-deflate; a=", "permessage-deflate; a=\"b c\"", "permessage-deflate; a=\"b",
        "permessage-deflate; a=\"\"", "permessage deflate", "permessage-deflate; a=b=c", "ext; a=\"b\\", "ext(1)"
    ])
    func malformed_lists_are_refused(value: String) {
        #expect(WebSocketExtension.parse([value]) == nil)
    }

    @Test func written_back_as_tokens() {
        let offer = WebSocketExtension(
            name: "permessage-deflate",
            parameters: [.init(name: "client_max_window_bits", value: "10"), .init(name: "server_no_context_takeover")])
        #expect(offer.description == "permessage-deflate; client_max_window_bits=10; server_no_context_takeover")
        #expect(WebSocketExtension.headerValue([offer, WebSocketExtension(name: "x")]) == offer.description + ", x")
        #expect(WebSocketExtension.parse([offer.description]) == [offer])
    }
}
