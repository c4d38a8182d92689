import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Autobahn TestSuite group 13 (`case12_x_x.py`, `DEFLATE_PARAMS`): the JSON corpus at the 18 sizes of
/// group 12 under seven offer/accept parameter sets (``DeflateParameterCase``), both directions against
/// raw SocketFraming peers whose decompressors hold exactly the agreed windows. Then our own sweep of
/// the window bits 8–15 with and without `client_no_context_takeover`. Counts scaled down from 1000.
@Suite(.cpuBound) struct DeflateConformance13Tests {
    /// 24 KiB of payload per case, at most 32 messages.
    static func count(_ size: DeflateMessageSize) -> Int { size.count(budget: 8 * 1024, cap: 32) }

    /// The offer's parameters, `server_max_window_bits=15` left out (our client never sends 15).
    static func parameters(_ offer: String) -> Set<Substring> {
        Set(offer.split(separator: "; ").dropFirst()).subtracting(["server_max_window_bits=15"])
    }

    /// Our client, configured as close to the set's first offer as it can be, against a raw server
    /// answering exactly as Autobahn's accept function does.
    @Test(arguments: DeflateParameterCase.all)
    func ourClientUnderEachParameterSet(_ set: DeflateParameterCase) async throws {
        let agreement = set.agreement(forResponse: set.autobahnResponse)
        for (index, size) in DeflateMessageSize.autobahn.enumerated() {
            let offer = try await DeflateConformanceHarness.ourClient(
                set.client, rawServerAnswers: set.autobahnResponse, agreement: agreement, corpus: .json, size: size,
                count: Self.count(size))
            #expect(Self.parameters(offer) == Self.parameters(set.offers[0]), "13.\(set.group).\(index + 1): \(offer)")
        }
    }

    /// A raw client sending Autobahn's exact offers to our listener configured as Autobahn's accept
    /// function: the answer is exactly ``DeflateParameterCase/ourResponse``.
    @Test(arguments: DeflateParameterCase.all)
    func ourServerUnderEachParameterSet(_ set: DeflateParameterCase) async throws {
        let echo = EchoListenerDelegate()
        let listener = try echo.start { $0.deflate = set.server }
        defer { listener.stop() }
        for (index, size) in DeflateMessageSize.autobahn.enumerated() {
            let response = try await DeflateConformanceHarness.ourServer(
                listener, echo: echo, offer: set.offers.joined(separator: ", "), agreement: { set.agreement(forResponse: $0) },
                corpus: .json, size: size, count: Self.count(size))
            #expect(response == set.ourResponse, "13.\(set.group).\(index + 1)")
        }
    }

    /// Our sweep: window bits 8–15 for both directions, with and without the client's
    /// `client_no_context_takeover`, server context takeover on. A 256-byte window (8, which zlib deflates
    /// with 9) must never be referred past by our compressor, or the raw peer's 8-bit inflater refuses
    /// the message.
    static let sweepSizes = [
        DeflateMessageSize(length: 4096, fragmentSize: 0), DeflateMessageSize(length: 32768, fragmentSize: 256)
    ]

    @Test(arguments: 8...15)
    func ourClientAtEveryWindowSize(_ bits: Int) async throws {
        for noContextTakeover in [false, true] {
            let configuration = PerMessageDeflate.ClientConfiguration(
                requestClientNoContextTakeover: noContextTakeover, serverMaxWindowBits: bits, clientMaxWindowBits: bits)
            let response = "permessage-deflate; server_max_window_bits=\(bits); client_max_window_bits=\(bits)"
            let agreement = PerMessageDeflate.Agreement(
                clientNoContextTakeover: noContextTakeover, serverMaxWindowBits: bits, clientMaxWindowBits: bits)
            for size in Self.sweepSizes {
                let offer = try await DeflateConformanceHarness.ourClient(
                    configuration, rawServerAnswers: response, agreement: agreement, corpus: .json, size: size, count: 4)
                let expected =
                    ["permessage-deflate"] + (noContextTakeover ? ["client_no_context_takeover"] : [])
                    + (bits < 15 ? ["server_max_window_bits=\(bits)", "client_max_window_bits=\(bits)"] : ["client_max_window_bits"])
                #expect(offer == expected.joined(separator: "; "))
            }
        }
    }

    @Test(arguments: 8...15)
    func ourServerAtEveryWindowSize(_ bits: Int) async throws {
        let echo = EchoListenerDelegate()
        let server = PerMessageDeflate.ServerConfiguration(serverNoContextTakeover: false, clientMaxWindowBits: bits)
        let listener = try echo.start { $0.deflate = server }
        defer { listener.stop() }
        for noContextTakeover in [false, true] {
            let hint = noContextTakeover ? "client_no_context_takeover; " : ""
            let offer = "permessage-deflate; \(hint)server_max_window_bits=\(bits); client_max_window_bits"
            let expected =
                "permessage-deflate; \(hint)server_max_window_bits=\(bits)" + (bits < 15 ? "; client_max_window_bits=\(bits)" : "")
            let agreement = PerMessageDeflate.Agreement(
                clientNoContextTakeover: noContextTakeover, serverMaxWindowBits: bits, clientMaxWindowBits: bits)
            for size in Self.sweepSizes {
                let response = try await DeflateConformanceHarness.ourServer(
                    listener, echo: echo, offer: offer, agreement: { _ in agreement }, corpus: .json, size: size, count: 4)
                #expect(response == expected)
            }
        }
    }

    /// The harness can fail: a raw server whose inflater keeps less than what it answered (9 bits of
    /// window while answering 15; no context while answering context takeover) refuses our client's
    /// messages, so the cases above would catch a compressor that breaks its agreement.
    @Test func theRawPeerRefusesAWindowOrContextBeyondWhatItKeeps() async throws {
        let size = DeflateMessageSize(length: 32768, fragmentSize: 0)
        let narrower = PerMessageDeflate.Agreement(clientMaxWindowBits: 9)
        await #expect(throws: PerMessageDeflate.DecompressionError.self) {
            _ = try await DeflateConformanceHarness.ourClient(
                PerMessageDeflate.ClientConfiguration(), rawServerAnswers: "permessage-deflate", agreement: narrower, corpus: .json,
                size: size, count: 2)
        }
        let forgetful = PerMessageDeflate.Agreement(clientNoContextTakeover: true)
        await #expect(throws: PerMessageDeflate.DecompressionError.self) {
            _ = try await DeflateConformanceHarness.ourClient(
                PerMessageDeflate.ClientConfiguration(), rawServerAnswers: "permessage-deflate", agreement: forgetful, corpus: .json,
                size: DeflateMessageSize(length: 1024, fragmentSize: 0), count: 1000)
        }
    }
}
