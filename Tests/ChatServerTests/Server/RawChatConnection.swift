import AsyncSocket
@testable import ChatProtocol
import FramedSocket
import Foundation
import SocketFraming

/// A bare connection to a chat server for tests that send what no client would (a header alone, an
/// HTTP request, a flood): writes any bytes, and reads the server's frames back as messages (nil once
/// the server has closed the connection). Used from one task at a time.
final class RawChatConnection: @unchecked Sendable {
    let connection: TCPConnection
    private var frames: FrameSequence<SevenByteHeaderFrameDecoder>.AsyncIterator
    private let codec = ChatCodec()

    init(port: UInt16) async throws {
        connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5))
        frames = connection.frames(decodedWith: ChatCodec().makeDecoder()).makeAsyncIterator()
    }

    /// The local address, as the server logs it (`127.0.0.1:PORT`).
    var localAddress: String { connection.localAddress?.description ?? "?" }

    func send(_ bytes: [UInt8]) async throws { try await connection.write(Data(bytes), timeout: .seconds(5)) }
    func send(_ data: Data) async throws { try await connection.write(data, timeout: .seconds(5)) }
    func send(_ message: ChatMessage) async throws { try await send(try codec.encode(message)) }

    /// The next message from the server, or nil when it closed the connection.
    func next() async throws -> ChatMessage? {
        guard let frame = try await frames.next() else { return nil }
        return try codec.message(from: frame)
    }

    /// The next message that is not presence news.
    func nextSkippingPresence() async throws -> ChatMessage? {
        while true {
            let message = try await next()
            switch message {
            case .presence?, .v2(.presence)?, .v2(.presenceChanges)?: continue
            default: return message
            }
        }
    }

    /// The next message that is neither presence news nor a delivery: the answer to a request.
    func nextAnswer() async throws -> ChatMessage? {
        while true {
            let message = try await nextSkippingPresence()
            switch message {
            case .delivery?, .v2(.delivery)?: continue
            default: return message
            }
        }
    }

    /// Sends `bytes` (if any) then a heartbeat of `version`, and returns the server's next message,
    /// which is the heartbeat's acknowledgement when the server handled everything before it.
    func roundTrip(after bytes: [UInt8] = [], version: ChatProtocolVersion = .v1) async throws -> ChatMessage? {
        let heartbeat = try codec.encode(version == .v2 ? .v2(.heartbeat) : .heartbeat)
        try await send(Data(bytes) + heartbeat)
        return try await nextSkippingPresence()
    }

    /// A version 2 login without a password (live only) as `name`, answered.
    func loginV2(_ name: String) async throws -> ChatMessage? {
        try await send(
            .v2(
                .login(
                    name: name, password: nil, resumeToken: nil, clientInstance: String(repeating: "cd", count: 16),
                    positions: [:])))
        return try await nextSkippingPresence()
    }

    func close() async { await connection.close() }
}
