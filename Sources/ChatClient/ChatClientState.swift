import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files a version 2 chat client keeps in its data directory for one name on one server, named
/// after both (``fileStem(name:host:port:)``, e.g. `ann@127.0.0.1_7777`):
///
/// - `STEM.sqlite`: the outbox, next message id, positions and client instance
///   (``SQLiteDeliveryStateStore``);
/// - `STEM.sent.sqlite`: where the server stored each own message, and the receipts shown
///   (``SentMessageLog``);
/// - `STEM.lock`: locked (fcntl(2) record lock) while a client uses the files, so a second client for the same
///   name and server (which would share the client instance and so the message ids) is refused with
///   ``ChatClientStateError/inUse(path:)`` instead of having its messages taken for duplicates.
///
/// The directory is created if missing, with its missing parents, mode 0700 (the files hold the
/// messages and, in the outbox, their text).
public final class ChatClientState: Sendable {
    /// The outbox, positions and client instance.
    public let deliveryStore: SQLiteDeliveryStateStore
    /// Where own messages were stored, and receipts shown.
    public let sentLog: SentMessageLog
    /// The lock file's path.
    public let lockPath: String
    /// The locked descriptor (closed, and so unlocked, by ``close()`` or when released).
    private let lockDescriptor: LockedValue<Int32>

    /// Opens (creating them if needed) the files for `name` on `host`:`port` in `directory`.
    /// - Throws: ``ChatClientStateError`` when the directory cannot be made or another client holds the
    ///   lock; what ``SQLiteDeliveryStateStore/init(path:synchronous:)`` and
    ///   ``SentMessageLog/init(path:capacity:synchronous:)`` throw.
    public init(directory: String, name: String, host: String, port: UInt16) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ChatClientStateError.cannotCreate(path: directory, reason: "\(error.localizedDescription)")
        }
        let stem = (directory as NSString).appendingPathComponent(Self.fileStem(name: name, host: host, port: port))
        lockPath = stem + ".lock"
        let descriptor = try Self.lock(lockPath)
        lockDescriptor = LockedValue(descriptor)
        do {
            deliveryStore = try SQLiteDeliveryStateStore(path: stem + ".sqlite")
            sentLog = try SentMessageLog(path: stem + ".sent.sqlite")
        } catch {
            Self.unlock(lockPath, descriptor)
            throw error
        }
    }

    /// Lock files held by this process. A POSIX record lock (fcntl(2) `F_SETLK`) keeps other processes
    /// out, and is not inherited by children (unlike flock(2), whose lock a child being spawned holds
    /// until its exec); it does not exclude this process itself, which this set does.
    private static let heldHere = LockedValue<Set<String>>([])

    /// Opens and write-locks `path`; returns its descriptor.
    private static func lock(_ path: String) throws -> Int32 {
        guard heldHere.withLock({ $0.insert(path).inserted }) else { throw ChatClientStateError.inUse(path: path) }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            _ = heldHere.withLock { $0.remove(path) }
            throw ChatClientStateError.cannotCreate(path: path, reason: reason)
        }
        var whole = flock()
        whole.l_type = Int16(F_WRLCK)
        whole.l_whence = Int16(SEEK_SET)
        guard fcntl(descriptor, F_SETLK, &whole) == 0 else {
            unlock(path, descriptor)
            throw ChatClientStateError.inUse(path: path)
        }
        return descriptor
    }

    /// Closes the lock file's descriptor (which releases the record lock) and forgets it.
    private static func unlock(_ path: String, _ descriptor: Int32) {
        closeDescriptor(descriptor)
        _ = heldHere.withLock { $0.remove(path) }
    }

    deinit { close() }

    /// Closes both files and releases the lock. Idempotent.
    public func close() {
        deliveryStore.close()
        sentLog.close()
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { Self.unlock(lockPath, descriptor) }
            descriptor = -1
        }
    }

    /// The file name stem for `name` on `host`:`port`: `NAME@HOST_PORT`, every byte outside
    /// `A-Z a-z 0-9 . - _` (and a leading `.`) written as `%XX`, so any user name and host (IPv6
    /// addresses, names with `/`) make one plain file name: `ann@127.0.0.1_7777`, `ann@%3A%3A1_7777`.
    public static func fileStem(name: String, host: String, port: UInt16) -> String {
        "\(escaped(name))@\(escaped(host))_\(port)"
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for (index, byte) in text.utf8.enumerated() {
            let plain =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x5F || (byte == 0x2E && index > 0)
            if plain {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// The default data directory: `$XDG_DATA_HOME/im-client` when `XDG_DATA_HOME` is an absolute
    /// path, else `$HOME/.local/share/im-client` (the XDG Base Directory default), else `nil`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return (data as NSString).appendingPathComponent("im-client")
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return (home as NSString).appendingPathComponent(".local/share/im-client")
        }
        return nil
    }
}

/// Closes a file descriptor (the C function, which ``ChatClientState/close()`` hides inside the class).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// Why ``ChatClientState`` could not be opened (SQLite's own failures are ``SQLiteError``s).
public enum ChatClientStateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data directory, or the lock file in it, could not be created: `reason` says why.
    case cannotCreate(path: String, reason: String)
    /// No data directory was given and none could be derived (neither `XDG_DATA_HOME` nor `HOME` is an
    /// absolute path).
    case noDataDirectory
    /// Another client holds the lock file at `path`: it uses the same name on the same server with the
    /// same data directory.
    case inUse(path: String)

    /// One line for error messages.
    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): return "cannot create \(path): \(reason)"
        case .noDataDirectory: return "no data directory: give --data-dir, or set XDG_DATA_HOME or HOME"
        case .inUse(let path): return "another im-client uses this name and server (lock \(path) is held)"
        }
    }
}
