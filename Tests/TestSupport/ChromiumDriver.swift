import Foundation
import Glibc
import Testing

/// Headless Chromium (Debian's `chromium`) opening one page (``ChromiumSession`` for a script of steps), driven by `Tests/Interop/chromium_driver.py`
/// over the DevTools pipe; see that script for what it does and prints.
public struct ChromiumDriver {
    /// The browser itself, not Debian's `/usr/bin/chromium` launcher script (whose `/etc/chromium.d`
    /// snippets add flags of their own and print shell errors in a container); the driver passes the
    /// headless flags.
    public static let binary = "/usr/lib/chromium/chromium"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/chromium_driver.py").path

    /// What the driver printed.
    public struct Output<PageResult: Decodable>: Decodable {
        /// `window.interopResult`'s value, or nil when the page did not get that far.
        public let result: PageResult?
        /// `Chrome/MAJOR.MINOR.BUILD.PATCH` (DevTools' `Browser.getVersion` product).
        public let browser: String?
        /// The browser's own log lines about WebSockets (a refused handshake's status, say).
        public let console: [String]
        /// What went wrong in the driver (a time-out, the browser gone), or nil.
        public let error: String?
        /// When, after the driver started, the browser answered (`browser`), the page had loaded
        /// (`loaded`), its result was there (`result`) and all was cleaned up (`done`).
        public let seconds: [String: Double]
    }

    /// Runs the driver on `url` (a page on 127.0.0.1), with a fresh profile directory, waiting up to
    /// `limit` (× ``TestTiming/slowdown``); the screenshot goes to `screenshot`. Afterwards no process of that browser runs any more
    /// (recorded as an issue, and killed, if one does): the driver kills and reaps them on every path;
    /// when it hangs past `limit` it gets SIGTERM, which makes it do the same, and only then SIGKILL.
    public static func open<PageResult: Decodable>(
        _ url: String, screenshot: String, limit: Duration, as: PageResult.Type
    ) async throws -> Output<PageResult> {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("ws-chromium-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let seconds = TestTiming.hangLimit(limit).components.seconds
        // Waiting for the driver and reading /proc block: on a thread of their own, not the test's executor.
        let (printed, leftovers) = try await runOnAThread { () throws -> (Data, [pid_t]) in
            let driver = try ChildProcess(
                "/usr/bin/python3",
                [script, "--url", url, "--screenshot", screenshot, "--profile", profile, "--chromium", binary, "--timeout", "\(seconds)"])
            defer { driver.stop() }
            if driver.waitForExit(within: limit + .seconds(20)) == nil {  // hangLimit'ed inside
                kill(driver.pid, SIGTERM)  // not reaped yet: the pid is still the driver's
                _ = driver.waitForExit(within: .seconds(15))
                throw WaitTimedOut(
                    description: "chromium_driver.py still running after \(limit): \(String(decoding: driver.allOutput, as: UTF8.self))")
            }
            let leftovers = try processes(mentioning: profile)
            leftovers.forEach { kill($0, SIGKILL) }
            return (driver.allOutput, leftovers)
        }
        #expect(leftovers.isEmpty, "browser processes left running (killed now): \(leftovers)")
        let lastLine = printed.split(separator: UInt8(ascii: "\n")).last ?? printed[...]
        do {
            return try JSONDecoder().decode(Output<PageResult>.self, from: Data(lastLine))
        } catch {
            throw ChildProcessError("chromium_driver.py printed no result: \(String(decoding: printed, as: UTF8.self))")
        }
    }

    /// The processes, zombies aside, whose command line contains `text` (every process of a browser
    /// started with `--user-data-dir=PROFILE` and `HOME=PROFILE`), from `/proc/PID/cmdline`.
    public static func processes(mentioning text: String) throws -> [pid_t] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != getpid(),
                let commandLine = read("/proc/\(name)/cmdline"), commandLine.contains(text),
                let stat = read("/proc/\(name)/stat"),
                let state = stat.split(separator: ")").last?.split(separator: " ").first,
                state != "Z"
            else { return nil }
            return pid
        }
    }

    /// A procfs file read to its end (procfs reports a size of 0), NULs as spaces; nil if it is gone.
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}

/// A PNG's width and height in pixels, from its IHDR chunk (PNG spec §11.2.2: 8-byte signature, then
/// length, "IHDR", width and height as big-endian 32-bit integers), or nil when `data` is no PNG.
public func pngSize(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == [0x49, 0x48, 0x44, 0x52]
    else { return nil }
    let integer = { (offset: Int) in bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (integer(16), integer(20))
}
