import Testing
@testable import SocketFraming

/// The server's side of the negotiation (RFC 7692 §5, §7.1): each parameter, each refusal, several offers.
@Suite struct PerMessageDeflateServerNegotiationTests {
    typealias Error = PerMessageDeflate.NegotiationError

    /// `permessage-deflate` with `parameters`, each `name` or `name=value`.
    static func offer(_ parameters: String..., name: String = "permessage-deflate") -> WebSocketExtension {
        offer(parameters, name: name)
    }

    /// `permessage-deflate` (or `name`) with `parameters`, each `name` or `name=value`.
    static func offer(_ parameters: [String], name: String = "permessage-deflate") -> WebSocketExtension {
        WebSocketExtension(
            name: name,
            parameters: parameters.map { text in
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                return .init(name: parts[0], value: parts.count > 1 ? parts[1] : nil)
            })
    }

    /// The response and agreement `configuration` gives for `offers`, or nil when it declines.
    static func accept(
        _ offers: [WebSocketExtension], _ configuration: PerMessageDeflate.ServerConfiguration = .init()
    ) -> (response: WebSocketExtension, agreement: PerMessageDeflate.Agreement, index: Int)? {
        guard case let .accepted(agreement, response, index) = configuration.negotiate(offers) else { return nil }
        return (response, agreement, index)
    }

    /// The refusals `configuration` gives for `offers`, or nil when it accepts one.
    static func refusals(_ offers: [WebSocketExtension], _ configuration: PerMessageDeflate.ServerConfiguration = .init()) -> [Error]? {
        guard case let .declined(refusals) = configuration.negotiate(offers) else { return nil }
        return refusals
    }

    @Test func a_bare_offer_gets_the_defaults_server_no_context_takeover() throws {
        let result = try #require(Self.accept([Self.offer()]))
        #expect(result.response == Self.offer("server_no_context_takeover"))
        #expect(result.agreement == .init(serverNoContextTakeover: true, clientNoContextTakeover: false))
    }

    @Test func a_browser_offer_also_gets_a_12_bit_client_window() throws {
        let result = try #require(Self.accept([Self.offer("client_max_window_bits")]))
        #expect(result.response == Self.offer("server_no_context_takeover", "client_max_window_bits=12"))
        #expect(result.agreement == .init(serverNoContextTakeover: true, clientMaxWindowBits: 12))
    }

    @Test func a_server_keeping_context_with_15_bits_answers_a_bare_offer_with_no_parameters() throws {
        let configuration = PerMessageDeflate.ServerConfiguration(serverNoContextTakeover: false, clientMaxWindowBits: 15)
        let result = try #require(Self.accept([Self.offer("client_max_window_bits")], configuration))
        #expect(result.response == Self.offer())
        #expect(result.agreement == .init())
    }

    @Test func server_no_context_takeover_asked_for_is_granted_whatever_the_configuration() throws {
        let configuration = PerMessageDeflate.ServerConfiguration(serverNoContextTakeover: false)
        let result = try #require(Self.accept([Self.offer("server_no_context_takeover")], configuration))
        #expect(result.response == Self.offer("server_no_context_takeover"))
        #expect(result.agreement.serverNoContextTakeover)
    }

    @Test func client_no_context_takeover_offered_is_accepted_and_configured_is_asked_for() throws {
        let offered = try #require(Self.accept([Self.offer("client_no_context_takeover")]))
        #expect(offered.response == Self.offer("server_no_context_takeover", "client_no_context_takeover"))
        #expect(offered.agreement.clientNoContextTakeover)
        let configured = try #require(Self.accept([Self.offer()], .init(clientNoContextTakeover: true)))
        #expect(configured.response == Self.offer("server_no_context_takeover", "client_no_context_takeover"))
    }

    @Test(arguments: [("8", 8), ("10", 10), ("15", 15)])
    func server_max_window_bits_offered_is_answered_with_the_same_value(value: String, bits: Int) throws {
        let result = try #require(Self.accept([Self.offer("server_max_window_bits=\(value)")]))
        #expect(result.response == Self.offer("server_no_context_takeover", "server_max_window_bits=\(value)"))
        #expect(result.agreement.serverMaxWindowBits == bits)
    }

    @Test func a_server_with_a_smaller_window_answers_with_its_own_value() throws {
        let configuration = PerMessageDeflate.ServerConfiguration(serverMaxWindowBits: 10)
        let offered = try #require(Self.accept([Self.offer("server_max_window_bits=13")], configuration))
        #expect(offered.response == Self.offer("server_no_context_takeover", "server_max_window_bits=10"))
        let unasked = try #require(Self.accept([Self.offer()], configuration))
        #expect(unasked.response == Self.offer("server_no_context_takeover", "server_max_window_bits=10"))
        #expect(unasked.agreement.serverMaxWindowBits == 10)
    }

    @Test func a_client_window_promised_in_the_offer_is_kept_when_smaller() throws {
        let result = try #require(Self.accept([Self.offer("client_max_window_bits=9")]))
        #expect(result.response == Self.offer("server_no_context_takeover", "client_max_window_bits=9"))
        #expect(result.agreement.clientMaxWindowBits == 9)
    }

    @Test func without_client_max_window_bits_in_the_offer_the_client_window_stays_15() throws {
        let result = try #require(Self.accept([Self.offer("server_max_window_bits=15")]))
        #expect(result.response.parameters.allSatisfy { $0.name != "client_max_window_bits" })
        #expect(result.agreement.clientMaxWindowBits == 15)
    }

    @Test func names_are_compared_without_regard_to_case() throws {
        let result = try #require(Self.accept([Self.offer("Server_Max_Window_Bits=9", name: "PerMessage-Deflate")]))
        #expect(result.agreement.serverMaxWindowBits == 9)
    }

    @Test(arguments: [
        (offer("x_unknown"), Error.unknownParameter(name: "x_unknown")),
        (offer("server_no_context_takeover", "server_no_context_takeover"), .duplicateParameter(name: "server_no_context_takeover")),
        (offer("client_max_window_bits", "client_max_window_bits=10"), .duplicateParameter(name: "client_max_window_bits")),
        (offer("server_no_context_takeover=1"), .unexpectedValue(parameter: "server_no_context_takeover", value: "1")),
        (offer("client_no_context_takeover="), .unexpectedValue(parameter: "client_no_context_takeover", value: "")),
        (offer("server_max_window_bits"), .missingValue(parameter: "server_max_window_bits")),
        (offer("server_max_window_bits=7"), .invalidWindowBits(parameter: "server_max_window_bits", value: "7")),
        (offer("server_max_window_bits=16"), .invalidWindowBits(parameter: "server_max_window_bits", value: "16")),
        (offer("server_max_window_bits=010"), .invalidWindowBits(parameter: "server_max_window_bits", value: "010")),
        (offer("server_max_window_bits=08"), .invalidWindowBits(parameter: "server_max_window_bits", value: "08")),
        (offer("client_max_window_bits=+9"), .invalidWindowBits(parameter: "client_max_window_bits", value: "+9")),
        (offer("client_max_window_bits= 9"), .invalidWindowBits(parameter: "client_max_window_bits", value: " 9")),
        (offer("client_max_window_bits=1a"), .invalidWindowBits(parameter: "client_max_window_bits", value: "1a")),
        (offer("client_max_window_bits="), .invalidWindowBits(parameter: "client_max_window_bits", value: "")),
        (
            offer("client_max_window_bits=\u{0661}\u{0665}"),
            .invalidWindowBits(parameter: "client_max_window_bits", value: "\u{0661}\u{0665}")
        )
    ])
    func an_invalid_offer_is_refused_with_its_reason(offer: WebSocketExtension, reason: Error) {
        #expect(Self.refusals([offer]) == [reason])
    }

    @Test func the_first_acceptable_offer_wins_and_the_refused_ones_before_it_are_skipped() throws {
        let offers = [
            Self.offer("server_max_window_bits=20"),
            WebSocketExtension(name: "x-webkit-deflate-frame"),
            Self.offer("server_max_window_bits=10", "client_max_window_bits"),
            Self.offer()
        ]
        let result = try #require(Self.accept(offers))
        #expect(result.index == 2)
        #expect(result.response == Self.offer("server_no_context_takeover", "server_max_window_bits=10", "client_max_window_bits=12"))
        #expect(
            result.agreement
                == .init(serverNoContextTakeover: true, clientNoContextTakeover: false, serverMaxWindowBits: 10, clientMaxWindowBits: 12))
    }

    @Test func when_every_offer_is_refused_the_server_declines_with_each_reason_in_order() {
        let offers = [Self.offer("a"), WebSocketExtension(name: "other"), Self.offer("server_max_window_bits")]
        #expect(Self.refusals(offers) == [.unknownParameter(name: "a"), .missingValue(parameter: "server_max_window_bits")])
        #expect(Self.refusals([]) == [])
        #expect(Self.refusals([WebSocketExtension(name: "other")]) == [])
    }

    @Test func refusals_read_as_english() {
        #expect(
            Error.invalidWindowBits(parameter: "server_max_window_bits", value: "08").description
                == "server_max_window_bits=08 is not 8 to 15 without leading zeros")
        #expect(Error.duplicateParameter(name: "a").description == "duplicate parameter a")
    }
}
