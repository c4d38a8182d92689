@testable import AsyncSocket
import Foundation
import Testing
import TestSupport

/// Half-close: `closeWrite()` sends a FIN after the queued writes; with `allowRemoteHalfClosure` the
/// peer's FIN ends only the read direction.
@Suite struct AsyncHalfCloseTests {
    @Test func clientHalfClosesThenTheServerAnswersAndHalfClosesToo() async throws {
        let pair = try await ConnectedPair.open(allowRemoteHalfClosure: true)
        let (client, server) = (pair.client, pair.server)
        try await client.write(bytes("request"))
        await client.closeWrite()
        let late = try await thrownError { try await client.write(bytes("late")) }
        #expect(late as? SocketError == .writeStreamClosed)

        // The server reads everything sent before the FIN, in pieces, then the end.
        #expect(text(try await within { try await server.read(exactly: 3) }) == "req")
        #expect(text(try await within { try await server.read() }) == "uest")
        let end = try await thrownError { _ = try await server.read() }
        #expect(end as? SocketError == .closedByPeer)
        try await within { try await server.waitUntilReadStreamClosed() }

        // Its write direction is still open.
        try await server.write(bytes("response"))
        await server.closeWrite()
        #expect(text(try await within { try await client.read(exactly: 8) }) == "response")
        let clientEnd = try await thrownError { _ = try await client.read() }
        #expect(clientEnd as? SocketError == .closedByPeer)
        try await within { try await client.waitUntilReadStreamClosed() }
        // Both directions are closed on both sides now.
        let serverWrite = try await thrownError { try await server.write(bytes("x")) }
        #expect(serverWrite as? SocketError == .writeStreamClosed)
        await pair.close()
    }

    @Test func serverHalfClosesFirstAndTheClientKeepsSending() async throws {
        let pair = try await ConnectedPair.open(allowRemoteHalfClosure: true)
        let (client, server) = (pair.client, pair.server)
        try await server.write(bytes("banner\n"))
        await server.closeWrite()
        #expect(text(try await within { try await client.read(upTo: TCPSocket.lfData) }) == "banner\n")
        let end = try await thrownError { _ = try await client.read(upTo: TCPSocket.lfData) }
        #expect(end as? SocketError == .closedByPeer)
        for line in ["one\n", "two\n"] { try await client.write(bytes(line)) }
        #expect(text(try await within { try await server.read(upTo: TCPSocket.lfData) }) == "one\n")
        #expect(text(try await within { try await server.read(upTo: TCPSocket.lfData) }) == "two\n")
        await client.closeWrite()
        let serverEnd = try await thrownError { _ = try await server.read() }
        #expect(serverEnd as? SocketError == .closedByPeer)
        await pair.close()
    }

    @Test func withoutHalfClosureThePeersFinEndsTheConnectionAfterItsData() async throws {
        let pair = try await ConnectedPair.open()
        let (client, server) = (pair.client, pair.server)
        try await client.write(bytes("bye"))
        await client.closeWrite()
        #expect(text(try await within { try await server.read(exactly: 3) }) == "bye")
        let read = try await thrownError { _ = try await server.read() }
        #expect(read as? SocketError == .closedByPeer)
        let write = try await thrownError { try await server.write(bytes("too late")) }
        #expect(write as? SocketError == .closedByPeer)
        // The server's socket closed, so the client's read direction ends too.
        let clientRead = try await thrownError { _ = try await client.read() }
        #expect(clientRead as? SocketError == .closedByPeer)
        await pair.close()
    }
}
