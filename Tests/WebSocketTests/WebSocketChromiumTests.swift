import Dispatch
import Foundation
import Testing
import TestSupport
import WebSocket

/// Our WebSocketListener against a browser's own WebSocket: headless Chromium (Debian's `chromium`)
/// loads `Tests/Interop/websocket_interop.html` from the listener's port as an ordinary HTTP request and
/// its script runs three cases against the listener (see the page); `Tests/Interop/chromium_driver.py`
/// drives the browser over the DevTools pipe and prints what the page found.
///
/// Set `WEBSOCKET_CHROMIUM_SCREENSHOT=/path/page.png` to keep the page's screenshot.
@Suite(.cpuBound) struct WebSocketChromiumTests {
    static let pagePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/websocket_interop.html").path

    /// A browser `CloseEvent`.
    struct Close: Decodable, Equatable {
        let code: Int
        let reason: String
        let wasClean: Bool
    }

    /// `window.interopResult`: what came back in each case (the page's names).
    struct PageResult: Decodable {
        struct Echo: Decodable {
            struct BigText: Decodable, Equatable {
                let length: Int  // UTF-16 code units, as JavaScript counts
                let equal: Bool
            }
            struct BigBinary: Decodable, Equatable {
                let length: Int
                let firstDifference: Int  // -1: none
            }
            let `protocol`: String
            let extensions: String
            let text: String
            let binary: [Int]
            let bigText: BigText
            let bigBinary: BigBinary
            let close: Close
        }
        struct ServerClose: Decodable {
            let message: String
            let close: Close
        }
        struct Refused: Decodable {
            let error: Bool
            let close: Close
        }
        let origin: String
        /// How long each case took in the page.
        let milliseconds: [String: Int]
        let echo: Echo?
        let serverClose: ServerClose?
        let refused: Refused?
        let error: String?
    }

    @Test(.enabled(if: ChromiumDriver.isInstalled, "Debian's chromium is not installed (scripts/setup.sh installs it)"))
    func chromiumsWebSocketGetsEveryEchoBothCloseHandshakesAndA403ForAForeignOrigin() async throws {
        let page = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.pagePath)))
        let app = PageServingListenerDelegate(page: page)
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: app, delegateQueue: DispatchQueue(label: "listener"))
        try listener.start()
        defer { listener.stop() }
        let origin = "http://127.0.0.1:\(listener.port)"
        app.allowedOrigin.withLock { $0 = origin }
        // A second listener that takes only its own pages' Origin: the page above is foreign to it.
        let refusing = PageServingListenerDelegate(page: page)
        let refusingListener = WebSocketListener(
            configuration: .init(port: 0), delegate: refusing, delegateQueue: DispatchQueue(label: "refusing"))
        try refusingListener.start()
        defer { refusingListener.stop() }
        refusing.allowedOrigin.withLock { $0 = "http://127.0.0.1:\(refusingListener.port)" }

        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("ws-chromium-\(UUID().uuidString).png").path
        let screenshot = ProcessInfo.processInfo.environment["WEBSOCKET_CHROMIUM_SCREENSHOT"] ?? temporary
        let query = "refusing=\(refusingListener.port)&stepLimitMs=\(TestTiming.hangLimit(.seconds(10)).components.seconds * 1000)"
        let output = try await ChromiumDriver.open("\(origin)/?\(query)", screenshot: screenshot, limit: .seconds(30), as: PageResult.self)
        let failed = output.error != nil || output.result?.error != nil
        defer { if !failed { try? FileManager.default.removeItem(atPath: temporary) } }  // kept to look at when it failed
        let timings = "driver \(output.seconds) s, page \(output.result?.milliseconds ?? [:]) ms"
        #expect(output.error == nil, "screenshot: \(screenshot); \(timings)")
        let result = try #require(output.result)
        #expect(result.error == nil, "screenshot: \(screenshot); \(timings)")
        #expect(result.origin == origin)

        // Case 1: each echo exactly as sent; the page's close code and reason reach our server.
        let echo = try #require(result.echo)
        #expect(echo.protocol == "" && echo.extensions == "")  // Chromium offers permessage-deflate; we take none
        #expect(echo.text == "grüße – Ωμέγα, привет, 𝔸𝔹 ✓")
        #expect(echo.binary == Array(0...255))
        #expect(echo.bigText == .init(length: 524_285, equal: true))
        #expect(echo.bigBinary == .init(length: 1 << 20, firstDifference: -1))
        // Our server's answering Close echoes the code, without a reason (RFC 6455 §5.5.1): the page sees "".
        #expect(echo.close == Close(code: 4000, reason: "", wasClean: true))
        // Case 2: our server's close code and reason reach the page, and Chromium's answer reaches us.
        let serverClose = try #require(result.serverClose)
        #expect(serverClose.message == PageServingListenerDelegate.farewell)
        #expect(serverClose.close == Close(code: 4001, reason: PageServingListenerDelegate.serverCloseReason, wasClean: true))
        // Case 3: 403 for a foreign Origin: the page's WebSocket gets an error, then close 1006.
        let refused = try #require(result.refused)
        #expect(refused.error && refused.close == Close(code: 1006, reason: "", wasClean: false))
        #expect(
            output.console == [
                "WebSocket connection to 'ws://127.0.0.1:\(refusingListener.port)/echo' failed: "
                    + "Error during WebSocket handshake: Unexpected response code: 403"
            ])
        #expect(refusing.requests.withLock { $0 } == ["refused \(origin)"])
        #expect(refusing.events.all.isEmpty)

        // What our server saw, per connection (the two connections' events may interleave).
        let events = try await app.events.next(8, within: .seconds(10))
        #expect(
            events.filter { $0.hasPrefix("/echo ") } == [
                "/echo accepted \(origin)", "/echo text grüße – Ωμέγα, привет, 𝔸𝔹 ✓", "/echo binary 256 bytes", "/echo text 1048570 bytes",
                "/echo binary 1048576 bytes", "/echo closed 4000 \"fertig – done ✓\" (clean)"
            ])
        #expect(
            events.filter { $0.hasPrefix("/server-close ") } == [
                "/server-close accepted \(origin)",
                "/server-close closed 4001 \"\(PageServingListenerDelegate.serverCloseReason)\" (clean)"
            ])
        #expect(app.requests.withLock { $0 }.first == "GET /?\(query)")

        // The screenshot: a PNG of the page's 720 × 360 viewport (chromium_driver.py sets it).
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        let size = try #require(pngSize(png))
        #expect(size.width == 720 && size.height == 360)
    }
}
