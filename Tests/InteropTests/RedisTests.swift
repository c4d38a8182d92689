#if os(Linux)
import AsyncSocket
import Foundation
import Testing

/// TCPSocket against Debian's redis-server: RESP replies read with reads to CRLF and to length.
@Suite(.timeLimit(.minutes(1))) struct RedisTests {
    /// A RESP array of bulk strings: how a client sends a command.
    static func command(_ parts: Data...) -> Data {
        var bytes = Data("*\(parts.count)\r\n".utf8)
        for part in parts {
            bytes.append(contentsOf: "$\(part.count)\r\n".utf8)
            bytes.append(part)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        return bytes
    }

    static func command(_ parts: String...) -> Data {
        var bytes = Data("*\(parts.count)\r\n".utf8)
        for part in parts { bytes.append(contentsOf: "$\(part.utf8.count)\r\n\(part)\r\n".utf8) }
        return bytes
    }

    @Test func thousandPipelinedPingsAnswerThousandPongsInOrder() async throws {
        let redis = try await Servers.redis()
        defer { redis.stop() }
        let client = try await InteropClient.connect(to: redis.port)
        defer { client.close() }

        // Every read queued up front, before a byte is sent; 500 inline commands in one write, 500
        // RESP commands in two more.
        for tag in 0..<1000 { client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: tag) }
        client.socket.write(Data(String(repeating: "PING\r\n", count: 500).utf8), withTimeout: 10, tag: -1)
        let resp = RedisTests.command("PING")
        #expect(resp == Data("*1\r\n$4\r\nPING\r\n".utf8))
        client.socket.write(Data(Array(repeating: resp, count: 300).joined()), withTimeout: 10, tag: -2)
        client.socket.write(Data(Array(repeating: resp, count: 200).joined()), withTimeout: 10, tag: -3)

        var lines: [String] = []
        var tags: [Int] = []
        for _ in 0..<1000 {
            let event = try await client.nextEvent()
            guard case .read(let data, let tag) = event else {
                Issue.record("after \(lines.count) replies: \(event)")
                return
            }
            lines.append(String(decoding: data, as: UTF8.self))
            tags.append(tag)
        }
        #expect(lines == Array(repeating: "+PONG\r\n", count: 1000))
        #expect(tags == Array(0..<1000))
        #expect(client.writtenTags == [-1, -2, -3])
        #expect(client.socket.isConnected)
    }

    /// SET then GET of a binary value that holds CR, LF and CRLF: the `$N` header is read to CRLF, the
    /// body with a read to length N + 2, never to a delimiter. Sizes: empty, tiny, larger than one
    /// segment, exactly TCPSocket's read-buffer limit, and past it.
    @Test(arguments: [0, 1, 10_000, TCPSocket.maxBufferedReadBytes, 3 * TCPSocket.maxBufferedReadBytes + 5])
    func setThenGetReturnsTheBinaryValueIntact(size: Int) async throws {
        let redis = try await Servers.redis()
        defer { redis.stop() }
        let client = try await InteropClient.connect(to: redis.port)
        defer { client.close() }

        var value = deterministicBytes(size, seed: UInt64(size) &+ 0xC0FFEE)
        if size >= 16 { value.replaceSubrange(3..<9, with: Data("\r\n\n\r\r\n".utf8)) }
        let key = Data("interop:\(size)".utf8)
        // SET and GET in one write: the GET's reply follows "+OK\r\n" in the same stream.
        client.socket.write(RedisTests.command(Data("SET".utf8), key, value) + RedisTests.command(Data("GET".utf8), key),
                            withTimeout: 10, tag: 1)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: 10)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, maxLength: 32, tag: 11)
        #expect(try await client.readLine(tag: 10) == "+OK\r\n")
        let header = try await client.readLine(tag: 11)
        #expect(header == "$\(size)\r\n")
        // (In a Swift String "\r\n" is one Character: trim it rather than drop two.)
        let length = try #require(Int(header.dropFirst().trimmingCharacters(in: .newlines)))
        client.socket.readData(toLength: UInt(length + 2), withTimeout: 10, tag: 12)
        let body = try await client.read(tag: 12)
        expectSameBytes(body, value + TCPSocket.crlfData, "GET's bulk string")
        #expect(client.writtenTags == [1])
    }

    @Test func missingKeyIsANullBulkStringAndQuitClosesTheConnection() async throws {
        let redis = try await Servers.redis()
        defer { redis.stop() }
        let client = try await InteropClient.connect(to: redis.port)
        defer { client.close() }

        client.socket.write(RedisTests.command("GET", "interop:absent"), withTimeout: 10, tag: 1)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: 1)
        #expect(try await client.readLine(tag: 1) == "$-1\r\n")

        // An unknown command is an error reply; the connection stays usable.
        client.socket.write(RedisTests.command("NOSUCHCOMMAND"), withTimeout: 10, tag: 2)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: 2)
        #expect(try await client.readLine(tag: 2) == "-ERR unknown command 'NOSUCHCOMMAND', with args beginning with: \r\n")

        // QUIT: "+OK", then redis closes. The read queued after it cannot complete.
        client.socket.write(RedisTests.command("QUIT"), withTimeout: 10, tag: 3)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: 3)
        client.socket.readData(to: TCPSocket.crlfData, withTimeout: 10, tag: 4)
        #expect(try await client.readLine(tag: 3) == "+OK\r\n")
        #expect(try await client.disconnection() == .closedByPeer)
        #expect(client.writtenTags == [1, 2, 3])
        #expect(!client.socket.isConnected)
    }
}
#endif
