import AsyncSocket
import Foundation
import Testing
import TestSupport

/// im-server's standard output is the operator's log: "TIME LEVEL text", the library's own lines
/// (LongLink) included once the level lets them through.
@Suite struct OperatorLogTests {
    @Test func debugShowsTheLibrarysSessionLinesWithTimesAndLevels() async throws {
        let server = try ChildProcess.startProduct("im-server", ["--port", "0", "--no-discovery", "--store", ":memory:", "--log-level", "debug"])
        defer { server.stop() }
        let listening = try await server.lines.next()
        // 2026-12-01T20:15:03.123Z notice im-server listening on 127.0.0.1:PORT (messages kept in memory only)
        #expect(listening.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z notice im-server listening on 127\.0\.0\.1:\d+ "#,
                                options: .regularExpression) != nil, "\(listening)")
        let port = try #require(UInt16(logText(listening).split(separator: ":").last?.split(separator: " ").first ?? ""))
        _ = try await server.lines.next()  // the limits
        let connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5))
        let address = connection.localAddress?.description ?? "?"
        let opened = try await server.lines.next()
        #expect(opened.hasSuffix(" debug session #1 \(address) opened"), "\(opened)")
        await connection.close()
        #expect(logText(try await server.lines.next()) == "session #1 \(address) closed (closed by client)")
    }
}
