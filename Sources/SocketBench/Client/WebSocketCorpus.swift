import FramingBenchmarks
import Foundation
import SocketFraming

/// The messages of a corpus run (`socket-bench client websocket echo --corpus chat`): 256 chat-like JSON
/// messages of 115–171 bytes (FramingBenchmarks' `PerMessageDeflateBenchmarks.chatMessages`, the
/// stream `framing-bench permessage-deflate` measures), sent as text. Message `k` of connection `c` is
/// number `(k + 97c) mod 256`, as ``FramePattern`` picks its slots. Immutable; any thread.
final class WebSocketCorpus: Sendable {
    /// The messages, UTF-8 JSON.
    let messages: [Data]

    init(count: Int = 256) { messages = PerMessageDeflateBenchmarks.chatMessages(count: count) }

    /// Message `sequence` of `connection`.
    func message(_ sequence: UInt64, connection: Int) -> Data {
        messages[Int((sequence &+ UInt64(connection) &* 97) % UInt64(messages.count))]
    }
}

/// A connection's permessage-deflate (RFC 7692) once the server accepted the offer: its compressor and
/// decompressor under the agreement. Used on the connection's loop thread only.
final class ClientDeflate {
    /// What the client offers: `PerMessageDeflate.ClientConfiguration`'s defaults
    /// (`permessage-deflate; client_max_window_bits`).
    static let configuration = PerMessageDeflate.ClientConfiguration()

    /// The offer as the handshake's extension.
    static var offer: WebSocketExtension { configuration.offer }

    let compressor: PerMessageDeflate.Compressor
    let decompressor: PerMessageDeflate.Decompressor

    /// The deflate of the server's accepted `response`.
    /// - Throws: `PerMessageDeflate.NegotiationError` when the response does not fit the offer.
    init(response: WebSocketExtension) throws {
        let agreement = try Self.configuration.accept(response)
        compressor = PerMessageDeflate.Compressor(agreement: agreement, role: .client)
        decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: .client)
    }
}
