import Foundation
import SocketFraming

/// The opening handshake's texts as the raw peers write them by hand (RFC 6455 §4.1, §4.2.2), and the
/// header lookup they read the other side's with.
enum RawHandshake {
    /// A client's upgrade request for `path` on `host`, with `key` as `Sec-WebSocket-Key` and `extensions`
    /// as `Sec-WebSocket-Extensions` (none when nil), up to and including its blank line.
    static func request(host: String, path: String, key: String, extensions: String? = nil) -> String {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let extensions { request += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        return request + "\r\n"
    }

    /// A server's 101 answer to a request with `key`, with `extensions` as `Sec-WebSocket-Extensions`
    /// (none when nil), up to and including its blank line.
    static func answer(key: String, extensions: String? = nil) -> String {
        var answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        answer += "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n"
        if let extensions { answer += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        return answer + "\r\n"
    }

    /// The values of every `name` header line in `head` (case-insensitive name, value trimmed).
    static func header(_ name: String, in head: String) -> [Substring] {
        head.split(separator: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { return nil }
            return line[line.index(after: colon)...].drop { $0 == " " }
        }
    }
}
