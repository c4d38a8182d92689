import Foundation
import SocketFraming
import Testing
import WebSocket

/// permessage-deflate (RFC 7692) in a connection's protocol, driven with bytes, no socket: the RFC's
/// example bytes (§7.2.3), context takeover, RSV1 rules (§6.1), the bomb bound.
@Suite struct WebSocketDeflateHandlerTests {
    typealias Handler = WebSocketProtocolHandler
    typealias Agreement = PerMessageDeflate.Agreement

    static func feed(_ handler: inout Handler, _ bytes: [UInt8]) -> [Handler.Output] {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: bytes)
        return handler.receive(&buffer)
    }

    static func handler(_ role: WebSocketRole, _ agreement: Agreement?, maxMessageSize: Int = 1 << 20) -> Handler {
        var handler = Handler(role: role, maxMessageSize: maxMessageSize, keepAlive: nil)
        if let agreement { handler.enablePerMessageDeflate(agreement) }
        return handler
    }

    /// A client's frame (masked with a random key) as a server receives it.
    static func fromClient(
        _ opcode: WebSocketOpcode, _ payload: Data, fin: Bool = true, rsv1: Bool = false
    ) throws -> [UInt8] {
        let frame = WebSocketFrame(fin: fin, reservedBits: rsv1 ? .rsv1 : [], opcode: opcode, payload: payload)
        return Array(try WebSocketFrameEncoder(role: .client).encode(frame))
    }

    /// What a server writes when it fails the connection with `code` for `error`, then the end.
    static func failure(_ code: UInt16, _ error: WebSocketProtocolError) -> [Handler.Output] {
        let reason = error.description
        let closeFrame = Data([0x88, UInt8(2 + reason.utf8.count), UInt8(code >> 8), UInt8(code & 0xFF)]) + Data(reason.utf8)
        return [
            .write(closeFrame), .closeTransport(afterWriting: true),
            .closed(WebSocketCloseResult(code: WebSocketCloseCode(rawValue: code), reason: reason, wasClean: false))
        ]
    }

    static func closeCode(_ outputs: [Handler.Output]) -> WebSocketCloseCode? {
        for case .closed(let result) in outputs { return result.code }
        return nil
    }

    static let hello: [UInt8] = [0xC1, 0x07, 0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]  // §7.2.3.1
    static let helloSharedWindow: [UInt8] = [0xC1, 0x05, 0xF2, 0x00, 0x11, 0x00, 0x00]  // §7.2.3.2

    @Test func aServerSendsTheRFCsHelloThenItsSharedWindowFormAndNeverCompressesAPing() throws {
        var server = Self.handler(.server, Agreement())
        #expect(server.perMessageDeflate == Agreement())
        #expect(try server.send(.text("Hello")) == [.write(Data(Self.hello))])
        #expect(try server.send(.text("Hello")) == [.write(Data(Self.helloSharedWindow))])
        #expect(try server.sendPing(Data("Hello".utf8)) == [.write(Data([0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]))])
        #expect(try server.send(.binary(Data())) == [.write(Data([0xC2, 0x01, 0x00]))])  // §7.2.3.6
        #expect(server.deflateHoldsContext == (true, false))
    }

    @Test func withServerNoContextTakeoverEveryHelloIsCompressedAfreshAndNothingIsHeldBetween() throws {
        var server = Self.handler(.server, Agreement(serverNoContextTakeover: true, clientNoContextTakeover: true))
        #expect(try server.send(.text("Hello")) == [.write(Data(Self.hello))])
        #expect(try server.send(.text("Hello")) == [.write(Data(Self.hello))])
        #expect(server.deflateHoldsContext == (false, false))
    }

    /// The server's defaults (docs/BENCHMARKS.md, "permessage-deflate memory per connection"): after a
    /// message each way an idle connection holds no compressor, and a decompressor only for a client that
    /// keeps its context (with a 12-bit window when its offer allows one).
    @Test(arguments: [
        ("permessage-deflate; client_max_window_bits", 12, true),  // Chrome's offer
        ("permessage-deflate", 15, true),  // no client_max_window_bits
        ("permessage-deflate; client_no_context_takeover; client_max_window_bits", 12, false)
    ])
    func theServersDefaultsHoldNoCompressorWhileIdle(offer: String, clientWindowBits: Int, holdsDecompressor: Bool) throws {
        let offers = try #require(WebSocketExtension.parse([offer]))
        guard case let .accepted(agreement, _, _) = PerMessageDeflate.ServerConfiguration().negotiate(offers) else {
            Issue.record("declined")
            return
        }
        #expect(agreement.serverNoContextTakeover && agreement.clientMaxWindowBits == clientWindowBits)
        var server = Self.handler(.server, agreement)
        let compressor = PerMessageDeflate.Compressor(agreement: agreement, role: .client)
        #expect(Self.feed(&server, try Self.fromClient(.text, compressor.compress(Data("hi".utf8)), rsv1: true)) == [.message(.text("hi"))])
        #expect(try server.send(.text("Hello")) == [.write(Data(Self.hello))])
        #expect(server.deflateHoldsContext == (false, holdsDecompressor))
    }

    @Test func aClientInflatesTheRFCsHelloWholeFragmentedAndInTheSharedWindow() {
        var client = Self.handler(.client, Agreement())
        #expect(Self.feed(&client, Self.hello) == [.message(.text("Hello"))])
        // §7.2.3.1's fragmented form: RSV1 on the first frame only.
        #expect(Self.feed(&client, [0x41, 0x03, 0xF2, 0x48, 0xCD, 0x80, 0x04, 0xC9, 0xC9, 0x07, 0x00]) == [.message(.text("Hello"))])
        #expect(Self.feed(&client, Self.helloSharedWindow) == [.message(.text("Hello"))])
    }

    @Test func withoutContextTakeoverTheSharedWindowFormHasNoHistoryToReferTo() {
        var client = Self.handler(.client, Agreement(serverNoContextTakeover: true))
        #expect(Self.feed(&client, Self.hello) == [.message(.text("Hello"))])
        #expect(Self.closeCode(Self.feed(&client, Self.helloSharedWindow)) == .invalidPayloadData)
    }

    @Test func rsv1WithoutAnAgreementFailsTheConnectionWith1002() throws {
        var server = Self.handler(.server, nil)
        let outputs = Self.feed(&server, try Self.fromClient(.text, Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]), rsv1: true))
        #expect(outputs == Self.failure(1002, .reservedBitsSet(.rsv1)))
    }

    @Test(arguments: [WebSocketOpcode.ping, .continuation])
    func rsv1OnAControlFrameOrAContinuationFailsWith1002EvenWithDeflate(opcode: WebSocketOpcode) throws {
        var server = Self.handler(.server, Agreement())
        var bytes: [UInt8] = []
        if opcode == .continuation { bytes += try Self.fromClient(.text, Data("a".utf8), fin: false) }
        bytes += try Self.fromClient(opcode, Data("b".utf8), rsv1: true)
        #expect(Self.feed(&server, bytes) == Self.failure(1002, .reservedBitsSet(.rsv1)))
    }

    @Test func aClientsCompressedMessagesInflateAtTheServerFragmentedWithAPingBetween() throws {
        var server = Self.handler(.server, Agreement())
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: false)
        #expect(
            Self.feed(&server, try Self.fromClient(.text, compressor.compress(Data("grüße".utf8)), rsv1: true)) == [
                .message(.text("grüße"))
            ])
        let payload = compressor.compress(Data(repeating: 0x2A, count: 100_000))
        let cut = payload.count / 2
        var bytes = try Self.fromClient(.binary, payload.prefix(cut), fin: false, rsv1: true)
        bytes += try Self.fromClient(.ping, Data([9]))
        bytes += try Self.fromClient(.continuation, payload.dropFirst(cut))
        #expect(Self.feed(&server, bytes) == [.write(Data([0x8A, 0x01, 9])), .message(.binary(Data(repeating: 0x2A, count: 100_000)))])
    }

    @Test func aBombStopsAtTheMessageLimitWith1009() throws {
        var server = Self.handler(.server, Agreement(), maxMessageSize: 65_536)
        let bomb = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true).compress(Data(count: 10_000_000))
        #expect(bomb.count < 20_000)  // 10 MB of zeros in under 20 KB: well within the 16 MiB frame limit
        #expect(
            Self.feed(&server, try Self.fromClient(.binary, bomb, rsv1: true))
                == Self.failure(1009, .decompressionFailed(.messageTooBig(maxBytes: 65_536))))
    }

    @Test func invalidUTF8InACompressedTextMessageFailsWith1007() throws {
        var server = Self.handler(.server, Agreement(clientNoContextTakeover: true))
        let payload = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true).compress(Data([0x68, 0xC0, 0xAF]))
        #expect(Self.feed(&server, try Self.fromClient(.text, payload, rsv1: true)) == Self.failure(1007, .invalidUTF8(offset: 1)))
    }
}
