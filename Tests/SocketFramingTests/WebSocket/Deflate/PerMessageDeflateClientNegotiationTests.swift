import Testing
@testable import SocketFraming

/// The client's side of the negotiation (RFC 7692 §5, §7.1): its offer and its check of the response.
@Suite struct PerMessageDeflateClientNegotiationTests {
    typealias Error = PerMessageDeflate.NegotiationError
    typealias Configuration = PerMessageDeflate.ClientConfiguration
    static func offer(_ parameters: String..., name: String = "permessage-deflate") -> WebSocketExtension {
        PerMessageDeflateServerNegotiationTests.offer(parameters, name: name)
    }

    @Test func the_default_offer_is_the_browsers() {
        #expect(Configuration().offer == Self.offer("client_max_window_bits"))
    }

    @Test func every_setting_appears_in_the_offer() {
        let configuration = Configuration(
            requestServerNoContextTakeover: true, requestClientNoContextTakeover: true, serverMaxWindowBits: 10,
            offerClientMaxWindowBits: true, clientMaxWindowBits: 9)
        #expect(
            configuration.offer
                == Self.offer(
                    "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits=10", "client_max_window_bits=9"))
        #expect(Configuration(offerClientMaxWindowBits: false).offer == Self.offer())
    }

    @Test func a_response_without_parameters_agrees_on_context_takeover_and_32_kib_windows() throws {
        #expect(try Configuration().accept(Self.offer()) == .init())
    }

    @Test func every_parameter_of_a_response_is_taken() throws {
        let agreement = try Configuration().accept(
            Self.offer("server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits=9", "client_max_window_bits=8"))
        #expect(
            agreement == .init(serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 9, clientMaxWindowBits: 8)
        )
    }

    @Test func the_servers_answer_to_our_offer_round_trips_through_both_sides() throws {
        let client = Configuration(requestClientNoContextTakeover: true, serverMaxWindowBits: 11)
        guard case let .accepted(serverAgreement, response, _) = PerMessageDeflate.ServerConfiguration().negotiate([client.offer]) else {
            Issue.record("declined")
            return
        }
        #expect(try client.accept(response) == serverAgreement)
        #expect(
            serverAgreement
                == .init(serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 11, clientMaxWindowBits: 12))
    }

    @Test func a_client_window_smaller_than_the_servers_limit_stays() throws {
        let agreement = try Configuration(clientMaxWindowBits: 9).accept(Self.offer("client_max_window_bits=12"))
        #expect(agreement.clientMaxWindowBits == 9)
    }

    @Test func a_smaller_server_window_than_offered_is_accepted() throws {
        #expect(try Configuration(serverMaxWindowBits: 12).accept(Self.offer("server_max_window_bits=10")).serverMaxWindowBits == 10)
        #expect(try Configuration().accept(Self.offer("server_max_window_bits=8")).serverMaxWindowBits == 8)
    }

    @Test func a_client_no_context_takeover_request_is_kept_if_the_server_does_not_answer_it() throws {
        #expect(try Configuration(requestClientNoContextTakeover: true).accept(Self.offer()).clientNoContextTakeover)
    }

    @Test(arguments: [
        (Configuration(), offer(name: "x-webkit-deflate-frame"), Error.notPermessageDeflate(name: "x-webkit-deflate-frame")),
        (Configuration(), offer("unknown"), .unknownParameter(name: "unknown")),
        (
            Configuration(), offer("server_max_window_bits=9", "server_max_window_bits=9"),
            .duplicateParameter(name: "server_max_window_bits")
        ),
        (Configuration(), offer("client_no_context_takeover=yes"), .unexpectedValue(parameter: "client_no_context_takeover", value: "yes")),
        (Configuration(), offer("client_max_window_bits"), .missingValue(parameter: "client_max_window_bits")),
        (Configuration(), offer("server_max_window_bits"), .missingValue(parameter: "server_max_window_bits")),
        (Configuration(), offer("server_max_window_bits=0x9"), .invalidWindowBits(parameter: "server_max_window_bits", value: "0x9")),
        (Configuration(), offer("client_max_window_bits=09"), .invalidWindowBits(parameter: "client_max_window_bits", value: "09")),
        (
            Configuration(offerClientMaxWindowBits: false), offer("client_max_window_bits=10"),
            .parameterNotOffered(name: "client_max_window_bits")
        ),
        (Configuration(requestServerNoContextTakeover: true), offer(), .missingParameter(name: "server_no_context_takeover")),
        (Configuration(serverMaxWindowBits: 10), offer(), .missingParameter(name: "server_max_window_bits")),
        (
            Configuration(serverMaxWindowBits: 10), offer("server_max_window_bits=11"),
            .windowBitsAboveOffer(parameter: "server_max_window_bits", offered: 10, answered: 11)
        )
    ])
    func an_unacceptable_response_is_refused_with_its_reason(configuration: Configuration, response: WebSocketExtension, reason: Error) {
        #expect(throws: reason) { try configuration.accept(response) }
    }
}
