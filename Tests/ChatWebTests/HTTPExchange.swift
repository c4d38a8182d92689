import AsyncSocket
import Foundation
import TestSupport

/// Sends `request` to 127.0.0.1:`port` (over TLS with `tls`) and returns everything the server answers
/// until it closes.
func httpExchange(port: UInt16, tls: TLSConfiguration? = nil, _ request: String) async throws -> String {
    let connection = try await TCPConnection.connect(
        toHost: "127.0.0.1", port: port, timeout: TestTiming.hangLimit(.seconds(10)), tls: tls)
    try await connection.write(Data(request.utf8))
    var answer = Data()
    do {
        while true { answer += try await connection.read(timeout: TestTiming.hangLimit(.seconds(10))) }
    } catch SocketError.closedByPeer {
        // The end of the answer: the server closes after each one.
    }
    await connection.close()
    return String(decoding: answer, as: UTF8.self)
}

/// `GET target` with a `Host` field.
func get(_ target: String, port: UInt16) async throws -> String {
    try await httpExchange(port: port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
}

/// The body of an HTTP answer (after the empty line).
func body(of answer: String) -> String {
    guard let range = answer.range(of: "\r\n\r\n") else { return "" }
    return String(answer[range.upperBound...])
}

/// The fields every answer of the web port's route table ends with (WebRoutes.securityHeaders), as sent.
let securityFields =
    "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nContent-Security-Policy: default-src 'self'; "
    + "script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; "
    + "frame-ancestors 'none'\r\n"
