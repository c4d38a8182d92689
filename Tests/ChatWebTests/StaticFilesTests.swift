import ChatWeb
import Foundation
import SocketFraming
import Testing
import TestSupport

/// The web client's files: read once from a directory, each with its type, never anything else.
@Suite struct StaticFilesTests {
    @Test func aDirectoryIsServedFileByFileWithTypesAndIndexAtItsDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("static-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("js"), withIntermediateDirectories: true)
        try Data("<p>hi</p>".utf8).write(to: directory.appendingPathComponent("index.html"))
        try Data("x=1".utf8).write(to: directory.appendingPathComponent("js/app.js"))
        try Data("secret".utf8).write(to: directory.appendingPathComponent(".hidden"))
        let files = try StaticFiles(directory: directory)
        #expect(
            files.files == [
                "/": .init(bytes: Array("<p>hi</p>".utf8), contentType: "text/html; charset=utf-8"),
                "/index.html": .init(bytes: Array("<p>hi</p>".utf8), contentType: "text/html; charset=utf-8"),
                "/js/app.js": .init(bytes: Array("x=1".utf8), contentType: "text/javascript; charset=utf-8")
            ])
        var routes = WebRoutes()
        files.add(to: &routes)
        #expect(
            String(decoding: routes.respond(to: HTTPRequestHead(method: "GET", target: "/js/app.js?v=2")).bytes, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nContent-Type: text/javascript; charset=utf-8\r\nContent-Length: 3\r\nCache-Control: no-cache\r\n"
                + "Connection: close\r\n\(securityFields)\r\nx=1")
        #expect(routes.respond(to: HTTPRequestHead(method: "GET", target: "/js/../.hidden")).head.statusCode == 404)
        #expect(routes.respond(to: HTTPRequestHead(method: "GET", target: "/.hidden")).head.statusCode == 404)
    }

    @Test func typesByExtension() {
        #expect(StaticFiles.contentType(ofPath: "/a/style.CSS") == "text/css; charset=utf-8")
        #expect(StaticFiles.contentType(ofPath: "/icon.svg") == "image/svg+xml")
        #expect(StaticFiles.contentType(ofPath: "/manifest.webmanifest") == "application/manifest+json")
        #expect(StaticFiles.contentType(ofPath: "/README") == "application/octet-stream")
        #expect(StaticFiles.contentType(ofPath: "/.htaccess") == "application/octet-stream")
    }

    @Test func theBundledPageSaysTheWebClientIsComing() throws {
        let index = try #require(StaticFiles.bundled.files["/"])
        #expect(index.contentType == "text/html; charset=utf-8")
        #expect(String(decoding: index.bytes, as: UTF8.self).contains("The web client is coming."))
        #expect(StaticFiles.bundled.files["/index.html"] == index)
    }
}
