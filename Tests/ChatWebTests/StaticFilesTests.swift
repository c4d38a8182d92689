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

    @Test func theBundledWebClientIsItsPageStyleSheetModulesAndIcon() throws {
        let files = StaticFiles.bundled.files
        let index = try #require(files["/"])
        #expect(index.contentType == "text/html; charset=utf-8")
        let html = String(decoding: index.bytes, as: UTF8.self)
        #expect(html.contains("<script type=\"module\" src=\"app.js\"></script>"))
        #expect(html.contains("<link rel=\"stylesheet\" href=\"chat.css\">"))
        #expect(files["/index.html"] == index)
        #expect(
            files.keys.sorted() == [
                "/", "/app.js", "/chat.css", "/favicon.svg", "/frame.js", "/index.html", "/link.js", "/outbox.js", "/schedule.js",
                "/status.js",
                "/store.js", "/tracker.js", "/view.js"
            ])
        for path in ["/app.js", "/frame.js", "/link.js", "/outbox.js", "/schedule.js", "/status.js", "/store.js", "/tracker.js", "/view.js"]
        {
            #expect(files[path]?.contentType == "text/javascript; charset=utf-8", "\(path)")
            // Text goes in as text only: no script of the client writes HTML.
            let script = String(decoding: files[path]?.bytes ?? [], as: UTF8.self)
            #expect(!script.contains("innerHTML") && !script.contains("outerHTML") && !script.contains("insertAdjacentHTML"), "\(path)")
        }
        #expect(files["/chat.css"]?.contentType == "text/css; charset=utf-8")
    }
}
