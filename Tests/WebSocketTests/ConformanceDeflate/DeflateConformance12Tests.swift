import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Autobahn TestSuite group 12 (`case12_x_x.py`): compressed echo of payloads of 16 B … 128 KiB, with
/// and without auto-fragmentation (18 sizes), from five corpora (12.1 JSON text, 12.2 bitmap, 12.3 German
/// text as binary, 12.4 HTML text, 12.5 PDF-like binary), with the default offer. Both directions: our
/// client against a raw server, a raw client against our listener. Message counts are scaled down from
/// Autobahn's 1000 (``DeflateMessageSize/count(budget:cap:)``; docs/WEBSOCKET-CONFORMANCE.md).
@Suite(.cpuBound) struct DeflateConformance12Tests {
    /// 48 KiB of payload per case, at most 64 messages.
    static func count(_ size: DeflateMessageSize) -> Int { size.count(budget: 16 * 1024, cap: 64) }

    /// Our client with its default configuration (`permessage-deflate; client_max_window_bits`) against a
    /// raw server answering as Autobahn's `accept_deflate` does, `permessage-deflate`: context takeover
    /// and 32 KiB windows both ways.
    @Test(arguments: DeflateCorpus.allCases)
    func ourClientEchoesEverySize(_ corpus: DeflateCorpus) async throws {
        let agreement = PerMessageDeflate.Agreement()
        for (index, size) in DeflateMessageSize.autobahn.enumerated() {
            let offer = try await DeflateConformanceHarness.ourClient(
                PerMessageDeflate.ClientConfiguration(), rawServerAnswers: "permessage-deflate", agreement: agreement,
                corpus: corpus, size: size, count: Self.count(size))
            #expect(offer == "permessage-deflate; client_max_window_bits", "12.\(corpus.group).\(index + 1)")
        }
    }

    /// A raw client sending Autobahn's default offer to our listener with its defaults: it answers
    /// `server_no_context_takeover`, echoes the client's `client_no_context_takeover` and limits the
    /// client's window to 12 bits.
    @Test(arguments: DeflateCorpus.allCases)
    func ourServerEchoesEverySize(_ corpus: DeflateCorpus) async throws {
        let echo = EchoListenerDelegate()
        let listener = try echo.start { $0.deflate = PerMessageDeflate.ServerConfiguration() }
        defer { listener.stop() }
        let expected = "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits=12"
        let agreement = PerMessageDeflate.Agreement(serverNoContextTakeover: true, clientNoContextTakeover: true, clientMaxWindowBits: 12)
        for (index, size) in DeflateMessageSize.autobahn.enumerated() {
            let response = try await DeflateConformanceHarness.ourServer(
                listener, echo: echo, offer: "permessage-deflate; client_no_context_takeover; client_max_window_bits",
                agreement: { _ in agreement }, corpus: corpus, size: size, count: Self.count(size))
            #expect(response == expected, "12.\(corpus.group).\(index + 1)")
        }
    }
}
