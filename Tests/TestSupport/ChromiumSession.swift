import AsyncSocket
import Foundation
import Glibc
import Testing

/// Headless Chromium driven step by step: `Tests/Interop/chromium_driver.py --script` (see its
/// `run_script` for the steps), one browser for the whole session, with tabs in browser contexts of their
/// own (separate storage: two users of one page, like two profiles). Each step waits for its answer; a step
/// the browser fails (an expression that threw, a wait that timed out) throws ``ChromiumSession/StepFailed``.
///
/// ``close()`` ends the browser; afterwards no process of it runs (recorded as an issue, and killed, if one
/// does). The driver kills the browser itself on every way out, and the kernel does when the driver dies.
public final class ChromiumSession: Sendable {
    /// A step the browser answered with an error.
    public struct StepFailed: Error, CustomStringConvertible {
        public let description: String
    }

    private struct Answer<Value: Decodable>: Decodable {
        let id: Int?
        let ok: Bool?
        let error: String?
        let value: Value?
    }

    /// The answer's shape when its value does not matter.
    private struct Ignored: Decodable {}

    private let driver: ChildProcess
    private let profile: String
    private let nextID = LockedValue(0)
    /// The longest one step may take (× ``TestTiming/slowdown``), unless the step says otherwise.
    public let stepLimit: Duration

    /// Starts the browser with a fresh profile; each step is bounded by `stepLimit`.
    public init(stepLimit: Duration = .seconds(30)) throws {
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("chat-chromium-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: false)
        self.stepLimit = stepLimit
        let seconds = TestTiming.hangLimit(stepLimit).components.seconds
        driver = try ChildProcess(
            "/usr/bin/python3",
            [ChromiumDriver.script, "--script", "--profile", profile, "--chromium", ChromiumDriver.binary, "--timeout", "\(seconds)"])
    }

    /// Sends one step (`do` and its fields) and returns its answer's value.
    @discardableResult
    public func step<Value: Decodable>(_ fields: [String: any Sendable], as: Value.Type, timeout: Duration? = nil) async throws -> Value? {
        let id = nextID.withLock {
            $0 += 1
            return $0
        }
        var request = fields
        request["id"] = id
        if let timeout { request["timeout"] = Double(timeout.components.seconds) }
        let data = try JSONSerialization.data(withJSONObject: request)
        driver.write(data + Data("\n".utf8))
        let limit = TestTiming.hangLimit((timeout ?? stepLimit) + .seconds(10))
        let line = try await driver.lines.first(within: limit) { $0.hasPrefix("{\"id\": \(id),") }
        let answer = try JSONDecoder().decode(Answer<Value>.self, from: Data(line.utf8))
        guard answer.ok == true else {
            throw StepFailed(description: "step \(fields["do"] ?? "?") failed: \(answer.error ?? line)")
        }
        return answer.value
    }

    /// A new browser context (storage of its own); its id, for ``open(_:url:context:width:height:dark:)``.
    public func newContext() async throws -> String {
        guard let id = try await step(["do": "context"], as: String.self) else { throw StepFailed(description: "no context id") }
        return id
    }

    /// Opens `url` in a new tab called `name` (in `context`, or the default one) with a viewport of
    /// `width` × `height` CSS pixels, and waits for its load event.
    public func open(
        _ name: String, url: String, context: String? = nil, width: Int = 720, height: Int = 360, dark: Bool = false
    ) async throws {
        var fields: [String: any Sendable] = ["do": "open", "name": name, "url": url, "width": width, "height": height, "dark": dark]
        if let context { fields["context"] = context }
        try await step(fields, as: Ignored.self)
    }

    /// The JSON value of `expression` in tab `tab` (a promise is awaited).
    public func evaluate<Value: Decodable>(_ tab: String, _ expression: String, as type: Value.Type) async throws -> Value? {
        try await step(["do": "eval", "tab": tab, "expression": expression], as: type)
    }

    /// Waits (polling in the page, up to `limit`) until `expression` is truthy in `tab`; returns its value.
    @discardableResult
    public func wait<Value: Decodable>(
        _ tab: String, until expression: String, as type: Value.Type = Bool.self, within limit: Duration = .seconds(15)
    ) async throws -> Value? {
        try await step(["do": "wait", "tab": tab, "expression": expression], as: type, timeout: TestTiming.hangLimit(limit))
    }

    /// Focuses `selector` (if given), types `text` (if given), then presses `keys` (`Enter`, `Tab`, …).
    public func type(_ tab: String, into selector: String? = nil, _ text: String = "", keys: [String] = []) async throws {
        var fields: [String: any Sendable] = ["do": "type", "tab": tab, "text": text, "keys": keys]
        if let selector { fields["selector"] = selector }
        try await step(fields, as: Ignored.self)
    }

    /// Reloads `tab` and waits for its load event.
    public func reload(_ tab: String) async throws { try await step(["do": "reload", "tab": tab], as: Ignored.self) }

    /// Crashes `tab`'s renderer (DevTools' `Page.crash`) and waits until the browser reports it; ``reload(_:)``
    /// brings the tab back, with its session storage.
    public func crash(_ tab: String) async throws { try await step(["do": "crash", "tab": tab], as: Ignored.self) }

    /// Closes `tab`.
    public func close(tab: String) async throws { try await step(["do": "close", "tab": tab], as: Ignored.self) }

    /// A PNG of `tab`'s viewport into `path`.
    public func screenshot(_ tab: String, to path: String) async throws {
        try await step(["do": "screenshot", "tab": tab, "path": path], as: Ignored.self)
    }

    /// The console's errors and warnings in `tab` since the last call (exceptions, console.error, the
    /// browser's own error entries such as a failed load or a CSP violation).
    public func consoleErrors(_ tab: String) async throws -> [String] {
        try await step(["do": "console", "tab": tab], as: [String].self) ?? []
    }

    /// Ends the browser and the driver; checks that none of its processes is left.
    public func close() async {
        driver.write(Data("{\"do\": \"quit\"}\n".utf8))
        let profile = self.profile
        let leftovers = await runOnAThread { [driver] () -> [pid_t] in
            if driver.waitForExit(within: .seconds(20)) == nil {
                kill(driver.pid, SIGTERM)
                _ = driver.waitForExit(within: .seconds(15))
            }
            driver.stop()
            let leftovers = (try? ChromiumDriver.processes(mentioning: profile)) ?? []
            leftovers.forEach { kill($0, SIGKILL) }
            return leftovers
        }
        #expect(leftovers.isEmpty, "browser processes left running (killed now): \(leftovers)")
        try? FileManager.default.removeItem(atPath: profile)
    }
}
