import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import Testing
import TestSupport

/// `im-server --web-root DIR` and the bundled web client: only the regular files inside the directory
/// are served, each at its one path; traversal (`/../`, `%2e%2e`, links out of the root), hidden files
/// and directory listings never reach anything; a missing bundle is a clear error, not a crash.
@Suite(.offThePool) struct StaticFilesTraversalTests {
    /// A temporary tree: `root` (index.html, js/app.js, sub/note.txt, .secret, .git/config, a link to
    /// js/app.js, a link to a file and one to a directory outside) beside `outside` (secret.txt).
    static func makeTree() throws -> (base: URL, root: URL) {
        let manager = FileManager.default
        let base = manager.temporaryDirectory.appendingPathComponent("web-root-\(UUID().uuidString.prefix(8))")
        let root = base.appendingPathComponent("root"), outside = base.appendingPathComponent("outside")
        for directory in ["js", "sub", ".git", "empty"] {
            try manager.createDirectory(at: root.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        try manager.createDirectory(at: outside, withIntermediateDirectories: true)
        for (path, text) in [
            ("root/index.html", "<p>hi</p>"), ("root/js/app.js", "x=1"), ("root/sub/note.txt", "note"), ("root/.secret", "s"),
            ("root/.git/config", "c"), ("outside/secret.txt", "the secret"), ("secret.txt", "beside the root")
        ] {
            try Data(text.utf8).write(to: base.appendingPathComponent(path))
        }
        try manager.createSymbolicLink(atPath: root.appendingPathComponent("link-in.js").path, withDestinationPath: "js/app.js")
        try manager.createSymbolicLink(atPath: root.appendingPathComponent("link-out.txt").path, withDestinationPath: "../secret.txt")
        try manager.createSymbolicLink(atPath: root.appendingPathComponent("linkdir").path, withDestinationPath: outside.path)
        return (base, root)
    }

    @Test func onlyTheRegularFilesInsideTheRootAreServedEachAtItsPath() throws {
        let (base, root) = try Self.makeTree()
        defer { try? FileManager.default.removeItem(at: base) }
        let files = try StaticFiles(directory: root)
        let html = StaticFiles.File(bytes: Array("<p>hi</p>".utf8), contentType: "text/html; charset=utf-8")
        let script = StaticFiles.File(bytes: Array("x=1".utf8), contentType: "text/javascript; charset=utf-8")
        #expect(
            files.files == [
                "/": html, "/index.html": html, "/js/app.js": script, "/link-in.js": script,
                "/sub/note.txt": .init(bytes: Array("note".utf8), contentType: "text/plain; charset=utf-8")
            ])
    }

    @Test func traversalHiddenFilesLinksOutAndDirectoriesAre404OverHTTP() async throws {
        let (base, root) = try Self.makeTree()
        defer { try? FileManager.default.removeItem(at: base) }
        let chat = try ChatFixture()
        let web = ChatWebServer(chat: chat.server, port: 0, files: try StaticFiles(directory: root), group: chat.group)
        try web.start()
        defer { web.stop() }
        for target in [
            "/../secret.txt", "/../outside/secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/js/../index.html",
            "/js/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/link-out.txt", "/linkdir/secret.txt", "/linkdir/", "/.secret",
            "/.git/config", "/sub/", "/sub", "/js/", "/empty/", "//index.html", "/index.html/"
        ] {
            let answer = try await get(target, port: web.port)
            #expect(answer.hasPrefix("HTTP/1.1 404 Not Found\r\n"), "\(target): \(answer)")
            #expect(body(of: answer) == "nothing at \(target)\n", "\(target)")
        }
        #expect(body(of: try await get("/", port: web.port)) == "<p>hi</p>")
        let script = try await get("/link-in.js", port: web.port)
        #expect(script.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/javascript; charset=utf-8\r\nContent-Length: 3\r\n"))
        #expect(body(of: script) == "x=1")
    }

    @Test func aMissingDirectoryAFileAndTooManyBytesAreTypedErrors() throws {
        let (base, root) = try Self.makeTree()
        defer { try? FileManager.default.removeItem(at: base) }
        let missing = base.appendingPathComponent("nowhere")
        #expect(throws: StaticFilesError.notADirectory(missing.path)) { try StaticFiles(directory: missing) }
        let file = root.appendingPathComponent("index.html")
        #expect(throws: StaticFilesError.notADirectory(file.path)) { try StaticFiles(directory: file) }
        // 9 + 3 + 3 + 4 bytes in the root (the link read as its own file).
        #expect(throws: StaticFilesError.tooLarge(limitBytes: 18)) { try StaticFiles(directory: root, maxTotalBytes: 18) }
        #expect(try StaticFiles(directory: root, maxTotalBytes: 19).files.count == 5)
    }

    @Test func theBundleIsFoundBesideTheTestsAndItsAbsenceIsAnErrorNotACrash() throws {
        #expect(try StaticFiles.loadBundled().files["/"] != nil)
        let nowhere = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)").appendingPathComponent(StaticFiles.bundleName)
        #expect(StaticFiles.bundledDirectory(searching: [nowhere]) == nil)
    }

    /// im-server copied away from `.build` (without its resource bundle): a clear error and status 1
    /// with the bundled client; with `--web-root` it serves that directory.
    @Test func imServerCopiedAwayFromItsBuildSaysSoAndServesAWebRoot() async throws {
        let (base, root) = try Self.makeTree()
        defer { try? FileManager.default.removeItem(at: base) }
        let copy = base.appendingPathComponent("im-server").path
        try FileManager.default.copyItem(atPath: ChildProcess.productPath("im-server"), toPath: copy)
        let arguments = ["--port", "0", "--no-discovery", "--store", ":memory:", "--web-port", "0"]
        let bundled = try ChildProcess(copy, arguments)
        defer { bundled.stop() }
        #expect(try await bundled.exitStatus(within: TestTiming.hangLimit(.seconds(20))) == 1)
        let beside = base.appendingPathComponent(StaticFiles.bundleName).path
        #expect(
            String(decoding: bundled.allOutput, as: UTF8.self)
                == "im-server: cannot serve the web client: the web client's files are not beside the executable (looked for "
                + "\(beside)): copy \(StaticFiles.bundleName) beside it, or give --web-root DIR\n")
        let served = try ChildProcess(copy, arguments + ["--web-root", root.path])
        defer { served.stop() }
        _ = try await served.lines.next()  // listening on
        let line = logText(try await served.lines.next())
        let prefix = "im-server web port on http://127.0.0.1:", suffix = "/ (chat at /chat, metrics at /metrics, health at /healthz)"
        let port = try #require(UInt16(line.dropFirst(prefix.count).dropLast(suffix.count)), "\(line)")
        #expect(body(of: try await get("/js/app.js", port: port)) == "x=1")
    }
}
