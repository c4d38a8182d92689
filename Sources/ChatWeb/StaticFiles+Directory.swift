import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a directory of files cannot be served (``StaticFiles/init(directory:maxTotalBytes:)``).
public enum StaticFilesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path is not a directory, or does not exist. Carries the path.
    case notADirectory(String)
    /// A file or directory under it cannot be read. Carries the path and the system's reason.
    case unreadable(String, String)
    /// The files together exceed the limit. Carries the limit in bytes.
    case tooLarge(limitBytes: Int)
    /// The web client bundled with im-server (`swift-async-socket_ChatWeb.resources`, SwiftPM's resource
    /// bundle) is not beside the executable. Carries the paths searched.
    case bundleMissing([String])

    /// One English sentence.
    public var description: String {
        switch self {
        case let .notADirectory(path): "\(path) is not a directory"
        case let .unreadable(path, reason): "cannot read \(path): \(reason)"
        case let .tooLarge(limit): "the files exceed \(limit) bytes together"
        case let .bundleMissing(paths):
            "the web client's files are not beside the executable (looked for \(paths.joined(separator: ", "))): copy "
                + "\(StaticFiles.bundleName) beside it, or give --web-root DIR"
        }
    }
}

extension StaticFiles {
    /// The most bytes ``init(directory:maxTotalBytes:)`` reads by default: 64 MiB (everything is kept in
    /// memory for as long as the server runs).
    public static let defaultMaxTotalBytes = 64 << 20

    /// The name of SwiftPM's resource bundle holding the web client (`Sources/ChatWeb/Web`), which
    /// `swift build` puts beside the executables: `swift-async-socket_ChatWeb.resources`.
    public static let bundleName = "swift-async-socket_ChatWeb.resources"

    /// The regular files under `directory` (recursively, following no link out of it), read now; at
    /// most `maxTotalBytes` bytes together. A symbolic link inside the directory is served at its own
    /// path when it leads to a regular file inside the directory, left out otherwise.
    /// - Throws: ``StaticFilesError``: not a directory, a file that cannot be read, too large.
    public init(directory: URL, maxTotalBytes: Int = StaticFiles.defaultMaxTotalBytes) throws(StaticFilesError) {
        guard let root = Self.realPath(directory.path), Self.isDirectory(root) else { throw .notADirectory(directory.path) }
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { throw .unreadable(root, "cannot list it") }
        var files: [String: File] = [:]
        var total = 0
        while let relative = enumerator.nextObject() as? String {
            // Hidden files and everything under a hidden directory.
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
            let path = root + "/" + relative
            // Where it really is: within the root, a regular file.
            guard let real = Self.realPath(path), real.hasPrefix(root + "/"), Self.isRegularFile(real) else { continue }
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: real)))
            } catch {
                throw .unreadable(path, "\(error.localizedDescription)")
            }
            total += bytes.count
            guard total <= maxTotalBytes else { throw .tooLarge(limitBytes: maxTotalBytes) }
            let requestPath = "/" + relative
            let file = File(bytes: bytes, contentType: Self.contentType(ofPath: requestPath))
            files[requestPath] = file
            if requestPath.hasSuffix("/index.html") { files[String(requestPath.dropLast("index.html".count))] = file }
        }
        self.init(files: files)
    }

    /// The web client bundled with ChatWeb (`Sources/ChatWeb/Web`, SwiftPM resources: its page, style
    /// sheet, ES modules and icon), as ``bundledDirectory`` finds it; empty (every file `404`) when it is
    /// missing, never a crash: check ``loadBundled()`` first to tell the operator.
    public static var bundled: StaticFiles { (try? loadBundled()) ?? StaticFiles(files: [:]) }

    /// The bundled web client's files (``bundled``).
    /// - Throws: ``StaticFilesError/bundleMissing(_:)`` when ``bundledDirectory`` finds no bundle; the
    ///   errors of ``init(directory:maxTotalBytes:)``.
    public static func loadBundled() throws(StaticFilesError) -> StaticFiles {
        guard let directory = bundledDirectory() else { throw .bundleMissing(bundleSearchPaths().map(\.path)) }
        return try StaticFiles(directory: directory)
    }

    /// The bundled web client's directory, `Web` in the first of `candidates` that holds it (default:
    /// ``bundleSearchPaths()``); nil when none does. Unlike SwiftPM's `Bundle.module`, which stops the
    /// process when its bundle is missing (an executable copied away from `.build`), this only looks.
    public static func bundledDirectory(searching candidates: [URL] = bundleSearchPaths()) -> URL? {
        candidates.map { $0.appendingPathComponent("Web") }.first { isDirectory($0.path) }
    }

    /// Where the bundle may be: beside the running executable (as `swift build` and an install that
    /// copies the bundle with the executable leave it), by the executable's real path and by
    /// `Bundle.main`'s.
    public static func bundleSearchPaths() -> [URL] {
        var directories: [URL] = []
        if let executable = realPath("/proc/self/exe") {
            directories.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        var seen = Set<String>()
        return directories.map { $0.appendingPathComponent(bundleName) }.filter { seen.insert($0.path).inserted }
    }

    /// The absolute path with every link resolved (realpath(3)); nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }
}
