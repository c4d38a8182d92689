import Foundation
import SocketFraming
import Testing
@testable import SocketBench
import TestSupport

/// The WebSocket load client's parts as values: the server frames' reader, the masked frames' ring,
/// the options.
@Suite struct WebSocketEchoReaderTests {
    /// Feeds `bytes` to a reader in pieces of `piece` bytes and returns each call's (opcode, fin,
    /// piece bytes, endsFrame).
    private func read(_ bytes: [UInt8], piece: Int) throws -> [(ServerFrame, [UInt8], Bool)] {
        var reader = WebSocketEchoReader()
        var calls: [(ServerFrame, [UInt8], Bool)] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + piece, bytes.count)
            try bytes[offset..<end].withUnsafeBytes { chunk in
                try reader.consume(chunk) { frame, payload, ends in calls.append((frame, Array(payload), ends)) }
            }
            offset = end
        }
        #expect(!reader.isInsideFrame)
        return calls
    }

    @Test func readsTheRFCsExamplesWholeAndOneByteAtATime() throws {
        // RFC 6455 §5.7: an unmasked "Hello", then a fragmented one ("Hel", "lo"), an unmasked Pong.
        let bytes: [UInt8] =
            [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f] + [0x01, 0x03, 0x48, 0x65, 0x6c] + [0x80, 0x02, 0x6c, 0x6f] + [0x8A, 0x00]
        let whole = try read(bytes, piece: bytes.count)
        #expect(whole.map(\.0.opcode) == [1, 1, 0, 0xA])
        #expect(whole.map(\.0.fin) == [true, false, true, true])
        #expect(whole.map(\.1) == [Array("Hello".utf8), Array("Hel".utf8), Array("lo".utf8), []])
        #expect(whole.map(\.2) == [true, true, true, true])
        let byByte = try read(bytes, piece: 1)
        #expect(byByte.filter(\.2).count == 4)
        #expect(byByte.reduce([UInt8]()) { $0 + $1.1 } == Array("HelloHello".utf8))
        #expect(byByte.filter { !$0.1.isEmpty }.allSatisfy { $0.1.count == 1 })
    }

    @Test func readsSixteenAndSixtyFourBitLengths() throws {
        // RFC 6455 §5.7: 256 bytes (0x7E 0x0100) and 65,536 bytes (0x7F, 8 bytes 0x10000), binary.
        let medium: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + [UInt8](repeating: 7, count: 256)
        let large: [UInt8] = [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](repeating: 9, count: 65_536)
        let calls = try read(medium + large, piece: 1000)
        #expect(calls.filter(\.2).map(\.0.length) == [256, 65_536])
        #expect(calls.reduce(0) { $0 + $1.1.count } == 256 + 65_536)
    }

    @Test func refusesWhatAServerMayNotSend() {
        let cases: [[UInt8]] = [
            [0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0],  // masked (§5.1)
            [0xA1, 0x00],  // RSV2
            [0x91, 0x00],  // RSV3
            [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0],  // 64-bit length with its top bit set
            [0x82, 0x7F, 0, 0, 0, 0, 0x04, 0, 0, 1]  // 64 MiB + 1
        ]
        for bytes in cases {
            #expect(throws: ServerFrameError.self, "\(bytes.prefix(3))") { _ = try read(bytes, piece: bytes.count) }
        }
    }

    @Test func reportsTheCompressedBit() throws {
        let calls = try read([0xC1, 0x01, 0x00], piece: 3)
        #expect(calls.first?.0 == ServerFrame(opcode: 1, fin: true, compressed: true, length: 1))
    }
}

@Suite struct WebSocketFramePatternTests {
    @Test func headersUseTheMinimalLengthEncoding() {
        #expect(WebSocketFramePattern.header(opcode: 2, payloadLength: 125, masked: false) == [0x82, 125])
        #expect(WebSocketFramePattern.header(opcode: 1, payloadLength: 126, masked: false) == [0x81, 126, 0, 126])
        #expect(WebSocketFramePattern.header(opcode: 2, payloadLength: 65_535, masked: true) == [0x82, 0xFE, 0xFF, 0xFF, 0, 0, 0, 0])
        #expect(WebSocketFramePattern.header(opcode: 2, payloadLength: 65_536, masked: false) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    @Test func everySlotUnmasksToItsPayload() {
        for (size, opcode) in [(64, WebSocketFramePattern.binaryOpcode), (300, WebSocketFramePattern.textOpcode), (16, 0x9)] {
            let payloads = FramePattern(payloadSize: size, printable: opcode == WebSocketFramePattern.textOpcode)
            let pattern = WebSocketFramePattern(payloads: payloads, opcode: opcode)
            let headerLength = size <= 125 ? 2 : 4
            #expect(pattern.frameSize == headerLength + 4 + size)
            #expect(pattern.ring.count == payloads.slotCount * pattern.frameSize)
            let ring = [UInt8](pattern.ring)
            for slot in [0, payloads.slotCount - 1] {
                let frame = Array(ring[slot * pattern.frameSize..<(slot + 1) * pattern.frameSize])
                #expect(frame[0] == 0x80 | opcode && frame[1] & 0x80 == 0x80)
                let key = Array(frame[headerLength..<headerLength + 4])
                let unmasked = frame[(headerLength + 4)...].enumerated().map { $0.element ^ key[$0.offset & 3] }
                let start = slot * payloads.frameSize + 4
                #expect(unmasked == [UInt8](payloads.ring[start..<start + size]))
                if opcode == WebSocketFramePattern.textOpcode { #expect(unmasked.allSatisfy { (0x20...0x7E).contains($0) }) }
            }
        }
    }

    @Test func aMaskedControlFrameUnmasksToItsPayload() {
        let frame = [UInt8](WebSocketFramePattern.maskedFrame(opcode: 0xA, payload: [1, 2, 3]))
        #expect(frame.count == 9 && frame[0] == 0x8A && frame[1] == 0x83)
        #expect((0..<3).map { frame[6 + $0] ^ frame[2 + $0] } == [1, 2, 3])
    }
}

@Suite struct WebSocketOptionsTests {
    @Test func eachModeHasItsDefaults() throws {
        let echo = try ClientOptions.parseWebSocket([])
        #expect(echo.mode == .pipeline && echo.connections == 100 && echo.depth == 16 && echo.size == 64 && echo.port == 9200)
        #expect(echo.webSocket == ClientOptions.WebSocketSettings())
        let bulk = try ClientOptions.parseWebSocket(["bulk"])
        #expect(bulk.size == 1 << 20 && bulk.depth == 4 && bulk.connections == 1)
        let idle = try ClientOptions.parseWebSocket(["idle", "--deflate"])
        #expect(idle.connections == 10_000 && idle.size == 16 && idle.webSocket?.deflate == true)
        #expect(try ClientOptions.parseWebSocket(["bulk", "-s", "100", "-D", "2"]).size == 100)
    }

    @Test func aCorpusRunMayOfferDeflate() throws {
        let options = try ClientOptions.parseWebSocket(["echo", "--corpus", "chat", "--deflate"])
        #expect(options.webSocket == ClientOptions.WebSocketSettings(path: "/", text: false, deflate: true, corpus: true))
    }

    @Test func theURLSetsHostPortPathAndTLS() throws {
        let options = try ClientOptions.parseWebSocket(["echo", "--url", "wss://[::1]:9443/chat?room=1", "--text"])
        #expect(options.host == "::1" && options.port == 9443 && options.tls)
        #expect(options.webSocket == ClientOptions.WebSocketSettings(path: "/chat?room=1", text: true, deflate: false))
        #expect(options.webSocketURL?.description == "wss://[::1]:9443/chat?room=1")
    }

    @Test func refusesWhatCannotRun() {
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["stream"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["idle", "-s", "126"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["echo", "--deflate"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["bulk", "--corpus", "chat"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["echo", "--corpus", "news"]) }
        #expect(throws: ArgumentError.self) { try ClientOptions.parseWebSocket(["--url", "http://x/"]) }
    }

    @Test func serverOptions() throws {
        #expect(try WebSocketServerCommand.parse([]) == WebSocketServerCommand.Options())
        #expect(
            try WebSocketServerCommand.parse(["--port", "0", "--deflate", "--path", "/ws", "--loops", "2", "--host", "::1"])
                == WebSocketServerCommand.Options(host: "::1", port: 0, deflate: true, path: "/ws", loops: 2))
        #expect(throws: ArgumentError.self) { try WebSocketServerCommand.parse(["--path", "ws"]) }
    }
}

/// A fraction of a second of each WebSocket client mode against the in-process WebSocket echo server:
/// that every run is clean, not how fast it is. The idle run pings once a second for a second, as
/// `BenchClientSmokeTests`' idle runs do: with a 0.1 s period a Pong later than 0.1 s counted missed, a
/// latency bound the test does not mean (seen once at a load average of 60–75).
@Suite struct WebSocketBenchSmokeTests {
    private let slowdown = Double(TestTiming.slowdown)

    @Test func everyModeRunsCleanAgainstTheWebSocketEchoServer() async throws {
        let server = WebSocketEchoServer(path: "/echo")
        let port = try server.start(port: 0)
        defer { server.stop() }
        let runs: [[String]] = [
            ["echo", "-c", "4", "-D", "8"], ["echo", "--text", "-c", "2", "-s", "300"], ["pingpong"],
            ["bulk", "-s", "200000", "-D", "2"], ["idle", "-c", "5", "-H", "\(1.0 * slowdown)", "--server-pid", "\(getpid())"],
            ["echo", "--corpus", "chat", "-c", "2"]
        ]
        for arguments in runs {
            var options = try ClientOptions.parseWebSocket(arguments + ["--url", "ws://127.0.0.1:\(port)/echo"])
            options.duration = (options.mode == .idle ? 1.0 : 0.3) * slowdown
            // No warm-up: the measured window holds the first echoes too. With 0.1 s of warm-up a run under
            // a full parallel test load once counted no echo at all in its window (messages 0, still clean).
            options.warmup = 0
            let result = await BenchClient.run(options)
            #expect(result.isClean, "\(arguments): \(ResultWriter.resultLine(result))")
            #expect(result.messages > 0 && result.connected == options.connections, "\(arguments)")
            if options.mode == .idle { #expect(result.serverRSSBytesPerConnection != nil) }
            if options.webSocket?.corpus == true {
                // No deflate offered: every message travels as it is, both ways.
                #expect(result.compression?.sentRatio == 1 && result.compression?.echoRatio == 1)
                #expect(result.deflateAccepted == 0)
            }
        }
    }

    @Test func withDeflateTheServerAcceptsTheOfferAndTheCorpusTravelsCompressed() async throws {
        let server = WebSocketEchoServer(path: "/echo", deflate: true)
        let port = try server.start(port: 0)
        defer { server.stop() }
        var options = try ClientOptions.parseWebSocket([
            "echo", "--corpus", "chat", "--deflate", "-c", "2", "--url", "ws://127.0.0.1:\(port)/echo"
        ])
        options.duration = 0.3 * slowdown
        options.warmup = 0
        let result = await BenchClient.run(options)
        #expect(result.isClean && result.messages > 0, "\(ResultWriter.resultLine(result))")
        #expect(result.deflateAccepted == 2)
        // JSON chat messages compress: fewer bytes than the plain messages both ways.
        #expect((result.compression?.sentRatio ?? 1) < 1 && (result.compression?.echoRatio ?? 1) < 1, "\(ResultWriter.resultLine(result))")
    }

    @Test func anotherPathIsRefusedWith404AndCountsAsAFailedConnect() async throws {
        let server = WebSocketEchoServer(path: "/echo")
        let port = try server.start(port: 0)
        defer { server.stop() }
        var options = try ClientOptions.parseWebSocket(["pingpong", "--url", "ws://127.0.0.1:\(port)/other"])
        options.duration = 0.1
        options.warmup = 0
        let result = await BenchClient.run(options)
        #expect(result.connected == 0 && result.connectFailures == 1 && !result.isClean)
    }
}

@Suite struct ClientDeflateTests {
    /// The client's offer, a server's answer to it (SocketFraming's negotiation), and a message each way.
    @Test func agreesWithAServerAndCompressesForIt() throws {
        let offer = PerMessageDeflate.ClientConfiguration().offer
        guard case .accepted(let agreement, let response, _) = PerMessageDeflate.ServerConfiguration().negotiate([offer]) else {
            Issue.record("the server declined \(offer)")
            return
        }
        #expect(ClientDeflate.offer.description == "permessage-deflate; client_max_window_bits")
        let deflate = try ClientDeflate(response: response)
        let message = WebSocketCorpus().messages[0]
        let compressed = deflate.compressor.compress(message)
        #expect(compressed.count < message.count)
        let server = PerMessageDeflate.Decompressor(agreement: agreement, role: .server)
        #expect(try server.decompress(compressed, maxMessageBytes: 1 << 20) == message)
        let echo = PerMessageDeflate.Compressor(agreement: agreement, role: .server).compress(message)
        #expect(try deflate.decompressor.decompress(echo, maxMessageBytes: 1 << 20) == message)
    }

    @Test func theCorpusIsChatJSONOf115To171Bytes() {
        let corpus = WebSocketCorpus()
        #expect(corpus.messages.count == 256)
        #expect(corpus.messages.map(\.count).min() == 115 && corpus.messages.map(\.count).max() == 171)
        #expect(corpus.messages.allSatisfy { $0.first == UInt8(ascii: "{") && $0.last == UInt8(ascii: "}") })
        #expect(corpus.message(0, connection: 1) == corpus.messages[97])
    }
}
