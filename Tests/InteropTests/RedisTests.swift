#if os(Linux)
    import AsyncSocket
    import Foundation
    import Testing
    import TestSupport

    /// A RESP (REdis Serialization Protocol) reply.
    indirect enum RESPValue: Equatable {
        case simple(String)
        case error(String)
        case integer(Int)
        /// nil: the null bulk string, `$-1`.
        case bulk(Data?)
        /// nil: the null array, `*-1`.
        case array([RESPValue]?)

        static func bulk(_ text: String) -> RESPValue { .bulk(Data(text.utf8)) }
    }

    extension InteropClient {
        /// Reads one RESP reply the GCDAsyncSocket way: each header line with a read to CRLF (at most
        /// 64 KiB), each bulk string with a read to length N + 2, arrays element by element. Every read
        /// uses `tag`.
        func readReply(tag: Int) async throws -> RESPValue {
            socket.readData(to: TCPSocket.crlfData, withTimeout: -1, maxLength: 64 * 1024, tag: tag)
            let line = try await read(tag: tag)
            guard let kind = line.first, line.count >= 3 else { throw RESPError("bad reply line \(line)") }
            let text = String(decoding: line.dropFirst().dropLast(2), as: UTF8.self)
            switch kind {
            case UInt8(ascii: "+"): return .simple(text)
            case UInt8(ascii: "-"): return .error(text)
            case UInt8(ascii: ":"):
                guard let value = Int(text) else { throw RESPError("bad integer \(text)") }
                return .integer(value)
            case UInt8(ascii: "$"):
                guard let length = Int(text), length >= -1 else { throw RESPError("bad bulk length \(text)") }
                if length == -1 { return .bulk(nil) }
                socket.readData(toLength: UInt(length + 2), withTimeout: TestTiming.hangTimeout(10), tag: tag)
                let body = try await read(tag: tag)
                guard body.suffix(2) == TCPSocket.crlfData else { throw RESPError("bulk string not ended by CRLF") }
                return .bulk(Data(body.dropLast(2)))
            case UInt8(ascii: "*"):
                guard let count = Int(text), count >= -1 else { throw RESPError("bad array length \(text)") }
                if count == -1 { return .array(nil) }
                var elements: [RESPValue] = []
                for _ in 0..<count { elements.append(try await readReply(tag: tag)) }
                return .array(elements)
            default:
                throw RESPError("unknown reply type in \(line)")
            }
        }
    }

    struct RESPError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// TCPSocket against Debian's redis-server: RESP replies read with reads to CRLF and to length.
    @Suite(TestTiming.timeLimit(minutes: 1)) struct RedisTests {
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
            for tag in 0..<1000 { client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: tag) }
            client.socket.write(Data(String(repeating: "PING\r\n", count: 500).utf8), withTimeout: TestTiming.hangTimeout(10), tag: -1)
            let resp = RedisTests.command("PING")
            #expect(resp == Data("*1\r\n$4\r\nPING\r\n".utf8))
            client.socket.write(Data(Array(repeating: resp, count: 300).joined()), withTimeout: TestTiming.hangTimeout(10), tag: -2)
            client.socket.write(Data(Array(repeating: resp, count: 200).joined()), withTimeout: TestTiming.hangTimeout(10), tag: -3)

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
            client.socket.write(
                RedisTests.command(Data("SET".utf8), key, value) + RedisTests.command(Data("GET".utf8), key),
                withTimeout: TestTiming.hangTimeout(10), tag: 1)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 10)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, maxLength: 32, tag: 11)
            #expect(try await client.readLine(tag: 10) == "+OK\r\n")
            let header = try await client.readLine(tag: 11)
            #expect(header == "$\(size)\r\n")
            // (In a Swift String "\r\n" is one Character: trim it rather than drop two.)
            let length = try #require(Int(header.dropFirst().trimmingCharacters(in: .newlines)))
            client.socket.readData(toLength: UInt(length + 2), withTimeout: TestTiming.hangTimeout(10), tag: 12)
            let body = try await client.read(tag: 12)
            expectSameBytes(body, value + TCPSocket.crlfData, "GET's bulk string")
            #expect(client.writtenTags == [1])
        }

        /// Array replies, nested, with null elements and integers, read by ``InteropClient/readReply(tag:)``.
        @Test func arrayRepliesParseWithNullAndNestedElements() async throws {
            let redis = try await Servers.redis()
            defer { redis.stop() }
            let client = try await InteropClient.connect(to: redis.port)
            defer { client.close() }

            client.socket.write(
                RedisTests.command("MSET", "a", "1", "b", "two\r\nlines") + RedisTests.command("MGET", "a", "missing", "b")
                    + RedisTests.command("RPUSH", "list", "x", "y", "z") + RedisTests.command("LRANGE", "list", "0", "-1")
                    + RedisTests.command("EXEC"), withTimeout: TestTiming.hangTimeout(10), tag: 1)
            #expect(try await client.readReply(tag: 1) == .simple("OK"))
            #expect(try await client.readReply(tag: 2) == .array([.bulk("1"), .bulk(nil), .bulk("two\r\nlines")]))
            #expect(try await client.readReply(tag: 3) == .integer(3))
            #expect(try await client.readReply(tag: 4) == .array([.bulk("x"), .bulk("y"), .bulk("z")]))
            #expect(try await client.readReply(tag: 5) == .error("ERR EXEC without MULTI"))

            // A transaction: EXEC answers with an array of the queued commands' replies.
            client.socket.write(
                RedisTests.command("MULTI") + RedisTests.command("INCR", "counter") + RedisTests.command("LRANGE", "list", "1", "1")
                    + RedisTests.command("EXEC"), withTimeout: TestTiming.hangTimeout(10), tag: 2)
            #expect(try await client.readReply(tag: 6) == .simple("OK"))
            #expect(try await client.readReply(tag: 7) == .simple("QUEUED"))
            #expect(try await client.readReply(tag: 8) == .simple("QUEUED"))
            #expect(try await client.readReply(tag: 9) == .array([.integer(1), .array([.bulk("y")])]))
            #expect(client.writtenTags == [1, 2])
        }

        /// Pub/sub: while the publisher publishes on its connection, the subscriber reads the server's
        /// pushes; every message arrives whole and in order.
        @Test func publishedMessagesArriveOnTheSubscribedConnection() async throws {
            let redis = try await Servers.redis()
            defer { redis.stop() }
            let subscriber = try await InteropClient.connect(to: redis.port)
            defer { subscriber.close() }
            let publisher = try await InteropClient.connect(to: redis.port)
            defer { publisher.close() }

            subscriber.socket.write(RedisTests.command("SUBSCRIBE", "interop"), withTimeout: TestTiming.hangTimeout(10), tag: 1)
            #expect(try await subscriber.readReply(tag: 1) == .array([.bulk("subscribe"), .bulk("interop"), .integer(1)]))

            let payloads = [Data("first".utf8), deterministicBytes(70_000, seed: 0x9B5B), Data("last\r\n".utf8)]
            async let messages = {
                var received: [RESPValue] = []
                for index in payloads.indices { received.append(try await subscriber.readReply(tag: 10 + index)) }
                return received
            }()
            for (index, payload) in payloads.enumerated() {
                publisher.socket.write(
                    RedisTests.command(Data("PUBLISH".utf8), Data("interop".utf8), payload), withTimeout: TestTiming.hangTimeout(10),
                    tag: index)
                #expect(try await publisher.readReply(tag: 20 + index) == .integer(1))
            }
            let received = try await messages
            #expect(received.count == payloads.count)
            for (message, payload) in zip(received, payloads) {
                guard case .array(let parts?) = message, parts.count == 3, case .bulk(let data?) = parts[2] else {
                    Issue.record("not a message: \(message)")
                    continue
                }
                #expect(parts[0] == .bulk("message"))
                #expect(parts[1] == .bulk("interop"))
                expectSameBytes(data, payload, "published payload")
            }
        }

        @Test func missingKeyIsANullBulkStringAndQuitClosesTheConnection() async throws {
            let redis = try await Servers.redis()
            defer { redis.stop() }
            let client = try await InteropClient.connect(to: redis.port)
            defer { client.close() }

            client.socket.write(RedisTests.command("GET", "interop:absent"), withTimeout: TestTiming.hangTimeout(10), tag: 1)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 1)
            #expect(try await client.readLine(tag: 1) == "$-1\r\n")

            // An unknown command is an error reply; the connection stays usable.
            client.socket.write(RedisTests.command("NOSUCHCOMMAND"), withTimeout: TestTiming.hangTimeout(10), tag: 2)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 2)
            #expect(try await client.readLine(tag: 2) == "-ERR unknown command 'NOSUCHCOMMAND', with args beginning with: \r\n")

            // QUIT: "+OK", then redis closes. The read queued after it cannot complete.
            client.socket.write(RedisTests.command("QUIT"), withTimeout: TestTiming.hangTimeout(10), tag: 3)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 3)
            client.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 4)
            #expect(try await client.readLine(tag: 3) == "+OK\r\n")
            #expect(try await client.disconnection() == .closedByPeer)
            #expect(client.writtenTags == [1, 2, 3])
            #expect(!client.socket.isConnected)
        }
    }
#endif
