import Foundation
import SocketFraming

/// Files served as they are (the web client's HTML, CSS, JavaScript), read once from a directory when
/// made (``init(directory:maxTotalBytes:)``: `im-server --web-root DIR`, or the bundled web client,
/// ``bundled``): each file at its path under the directory (`/app.js`), `index.html` also at its
/// directory's path (`/`). Only the regular files found then are served, each at exactly one path, so a
/// request can never reach outside the directory: `/../x`, `/%2e%2e/x` and `/js/../x` are simply not
/// routes (targets are matched as sent, never decoded or resolved), a symbolic link leading out of the
/// directory is left out, hidden files (`.name`) are left out, and a directory is never listed.
public struct StaticFiles: Sendable {
    /// One file's answer: its bytes and `Content-Type`.
    public struct File: Sendable, Equatable {
        /// The file's bytes, as read.
        public var bytes: [UInt8]
        /// Its media type (``StaticFiles/contentType(ofPath:)``).
        public var contentType: String

        /// A file of `bytes` served as `contentType`.
        public init(bytes: [UInt8], contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
        }
    }

    /// Request path (`/`, `/index.html`, `/js/app.js`) → file.
    public let files: [String: File]

    /// Serves `files` (request path → file) as given.
    public init(files: [String: File]) { self.files = files }

    /// Adds a `GET` route to `routes` for each file: `200 OK`, its `Content-Type`, `Cache-Control: no-cache`
    /// (a browser checks again, so a new version is seen at once).
    public func add(to routes: inout WebRoutes) {
        for (path, file) in files {
            let headers: HTTPHeaders = [
                ("Content-Type", file.contentType), ("Content-Length", String(file.bytes.count)), ("Cache-Control", "no-cache"),
                ("Connection", "close")
            ]
            let response = HTTPResponse(head: HTTPResponseHead(statusCode: 200, headers: headers), body: file.bytes)
            routes.add(path) { _ in response }
        }
    }

    /// The media type of a file by its extension (RFC 9239 for JavaScript), text in UTF-8;
    /// `application/octet-stream` for one not listed (never sniffed: every answer is `nosniff`).
    public static func contentType(ofPath path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        case "txt": return "text/plain; charset=utf-8"
        case "woff2": return "font/woff2"
        default: return "application/octet-stream"
        }
    }
}
