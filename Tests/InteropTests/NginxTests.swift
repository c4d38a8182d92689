#if os(Linux)
    import AsyncSocket
    import Foundation
    import Testing
    import TestSupport

    /// One HTTP/1.1 response as a client built on TCPSocket reads it.
    struct HTTPResponse {
        let statusLine: String
        /// Header fields by lowercased name.
        let headers: [String: String]
        let body: Data
    }

    extension InteropClient {
        /// Writes one GET request.
        func get(_ path: String, close: Bool = false, tag: Int) {
            socket.write(HTTPResponse.request(path, close: close), withTimeout: TestTiming.hangTimeout(10), tag: tag)
        }

        /// Reads one response: its head with a read to CRLF CRLF (at most 16 KiB), then a read of
        /// Content-Length bytes. Uses tags `tag` (head) and `tag + 1` (body).
        func readResponse(tag: Int) async throws -> HTTPResponse {
            socket.readData(to: HTTPResponse.endOfHead, withTimeout: -1, maxLength: 16 * 1024, tag: tag)
            let head = try await readLine(tag: tag)
            var lines = head.components(separatedBy: "\r\n")
            guard lines.count >= 3, lines.suffix(2) == ["", ""] else { throw HTTPError("malformed head \(head.debugDescription)") }
            let statusLine = lines.removeFirst()
            var headers: [String: String] = [:]
            for line in lines.dropLast(2) {
                guard let colon = line.firstIndex(of: ":") else { throw HTTPError("malformed header line \(line.debugDescription)") }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            guard let text = headers["content-length"], let length = Int(text), length >= 0 else {
                throw HTTPError("no Content-Length in \(head.debugDescription)")
            }
            // readData(toLength: 0) is ignored (as in GCDAsyncSocket), so an empty body must not be read.
            var body = Data()
            if length > 0 {
                socket.readData(toLength: UInt(length), withTimeout: TestTiming.hangTimeout(10), tag: tag + 1)
                body = try await read(tag: tag + 1)
            }
            return HTTPResponse(statusLine: statusLine, headers: headers, body: body)
        }
    }

    extension HTTPResponse {
        static let endOfHead = Data("\r\n\r\n".utf8)

        static func request(_ path: String, close: Bool = false) -> Data {
            Data(
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: swift-async-socket-interop\r\n\(close ? "Connection: close\r\n" : "")\r\n"
                    .utf8)
        }
    }

    struct HTTPError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// TCPSocket as an HTTP/1.1 client of Debian's nginx: several requests on one keep-alive connection,
    /// sequential and pipelined, static files of known contents, a 404, and files past the read buffer.
    @Suite(TestTiming.timeLimit(minutes: 1)) struct NginxTests {
        static let hello = Data("Hello from nginx!\n".utf8)
        /// Every byte value, after a blank line: the body holds CR LF CR LF, which must not end anything.
        static let bytes = Data("\r\n\r\n".utf8) + Data((0...255).map { UInt8($0) }) + Data((0...255).reversed().map { UInt8($0) })
        /// Exactly TCPSocket's read-buffer limit.
        static let large = deterministicBytes(TCPSocket.maxBufferedReadBytes, seed: 0x1A96E)
        /// Past it, and odd.
        static let huge = deterministicBytes(3 * TCPSocket.maxBufferedReadBytes + 7, seed: 0x4_06E)

        static let files: [String: Data] = [
            "hello.txt": hello, "bytes.bin": bytes, "empty.txt": Data(), "large.bin": large, "huge.bin": huge
        ]

        /// nginx's own 404 page (with `server_tokens off`).
        static let notFoundPage = Data(
            """
            <html>\r
            <head><title>404 Not Found</title></head>\r
            <body>\r
            <center><h1>404 Not Found</h1></center>\r
            <hr><center>nginx</center>\r
            </body>\r
            </html>\r

            """.utf8)

        /// The response expected for `path`: status line, Content-Type, body.
        static func expected(_ path: String) -> (status: String, type: String, body: Data) {
            let name = String(path.dropFirst())
            guard let body = files[name] else { return ("HTTP/1.1 404 Not Found", "text/html", notFoundPage) }
            return ("HTTP/1.1 200 OK", name.hasSuffix(".txt") ? "text/plain" : "application/octet-stream", body)
        }

        /// Checks a response against what `path` should give; `connection` is the expected Connection header.
        static func check(
            _ response: HTTPResponse, for path: String, connection: String = "keep-alive",
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let expected = expected(path)
            #expect(response.statusLine == expected.status, "\(path)", sourceLocation: sourceLocation)
            #expect(response.headers["content-type"] == expected.type, "\(path)", sourceLocation: sourceLocation)
            #expect(response.headers["content-length"] == "\(expected.body.count)", "\(path)", sourceLocation: sourceLocation)
            #expect(response.headers["connection"] == connection, "\(path)", sourceLocation: sourceLocation)
            #expect(response.headers["server"] == "nginx", "\(path)", sourceLocation: sourceLocation)
            expectSameBytes(response.body, expected.body, "\(path): body", sourceLocation: sourceLocation)
        }

        @Test func sequentialRequestsShareOneKeepAliveConnection() async throws {
            let nginx = try await Servers.nginx(files: NginxTests.files)
            defer { nginx.stop() }
            let client = try await InteropClient.connect(to: nginx.port)
            defer { client.close() }
            let localPort = client.socket.localPort

            let paths = ["/hello.txt", "/bytes.bin", "/empty.txt", "/missing.txt", "/large.bin", "/hello.txt"]
            for (index, path) in paths.enumerated() {
                client.get(path, tag: index)
                let response = try await client.readResponse(tag: 100 * index)
                NginxTests.check(response, for: path)
            }
            #expect(client.writtenTags == Array(paths.indices))
            #expect(client.socket.isConnected)
            #expect(client.socket.localPort == localPort)
            #expect(!client.hasDisconnected)
        }

        @Test func pipelinedRequestsInOneWriteAnswerInOrder() async throws {
            let nginx = try await Servers.nginx(files: NginxTests.files)
            defer { nginx.stop() }
            let client = try await InteropClient.connect(to: nginx.port)
            defer { client.close() }

            let paths = ["/bytes.bin", "/missing.txt", "/hello.txt", "/empty.txt", "/huge.bin", "/large.bin", "/hello.txt"]
            client.socket.write(Data(paths.map { HTTPResponse.request($0) }.joined()), withTimeout: TestTiming.hangTimeout(10), tag: 1)
            for (index, path) in paths.enumerated() {
                let response = try await client.readResponse(tag: 100 * index)
                NginxTests.check(response, for: path)
            }
            #expect(client.writtenTags == [1])
            #expect(client.socket.isConnected)
            #expect(!client.hasDisconnected)
        }

        /// The last of the pipelined requests asks nginx to close: its response, then the peer's close.
        @Test func connectionCloseRequestEndsWithClosedByPeer() async throws {
            let nginx = try await Servers.nginx(files: NginxTests.files)
            defer { nginx.stop() }
            let client = try await InteropClient.connect(to: nginx.port)
            defer { client.close() }

            client.socket.write(
                HTTPResponse.request("/hello.txt") + HTTPResponse.request("/huge.bin", close: true),
                withTimeout: TestTiming.hangTimeout(10), tag: 1)
            NginxTests.check(try await client.readResponse(tag: 0), for: "/hello.txt")
            NginxTests.check(try await client.readResponse(tag: 10), for: "/huge.bin", connection: "close")
            // Nothing more is queued; the close alone ends the connection.
            #expect(try await client.disconnection() == .closedByPeer)
            #expect(!client.socket.isConnected)
        }

        /// With `keepalive_requests 3` nginx closes the connection itself after the third response.
        @Test func serverClosesAfterItsKeepAliveRequestLimit() async throws {
            let nginx = try await Servers.nginx(files: NginxTests.files, keepaliveRequests: 3)
            defer { nginx.stop() }
            let client = try await InteropClient.connect(to: nginx.port)
            defer { client.close() }

            for index in 0..<3 {
                client.get("/bytes.bin", tag: index)
                NginxTests.check(
                    try await client.readResponse(tag: 10 * index), for: "/bytes.bin",
                    connection: index == 2 ? "close" : "keep-alive")
            }
            // A read queued now waits for a response that will not come: the close ends it.
            client.socket.readData(to: HTTPResponse.endOfHead, withTimeout: -1, tag: 99)
            #expect(try await client.disconnection() == .closedByPeer)
        }
    }
#endif
