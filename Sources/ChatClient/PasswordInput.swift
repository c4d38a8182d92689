import ChatProtocol
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `im-client` gets a password: the first line of a file (`--password-file FILE`), or, in a
/// terminal, typed at a prompt that does not echo. Neither ever prints the password, and the errors
/// name the file, never its content.
public enum PasswordInput {
    /// The first line of the file at `path`, without its line ending (`\n` or `\r\n`).
    /// - Throws: ``PasswordError``: the file cannot be read, its first line is empty, is not UTF-8, or is
    ///   longer than ``ChatCodec/maxPasswordBytes`` (1,024) bytes.
    public static func read(file path: String) throws(PasswordError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        let line = data.prefix { $0 != 0x0A }
        let bytes = line.last == 0x0D ? line.dropLast() : line
        guard let password = String(data: Data(bytes), encoding: .utf8) else { throw .notUTF8(path: path) }
        try check(password, from: path)
        return password
    }

    /// Checks the length of a password from `source`.
    static func check(_ password: String, from source: String) throws(PasswordError) {
        guard !password.isEmpty else { throw .empty(path: source) }
        guard password.utf8.count <= ChatCodec.maxPasswordBytes else {
            throw .tooLong(path: source, bytes: password.utf8.count)
        }
    }

    /// Whether `descriptor` is a terminal (isatty(3)).
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Writes `prompt` to `output`, reads one line from the terminal `input` with echo turned off
    /// (termios: `ECHO` cleared, restored afterwards, also when reading fails), then writes a newline
    /// (the one the user typed was not echoed). Reads byte by byte, so nothing after the line is
    /// consumed from `input`. Blocks the calling thread until the line is typed.
    ///
    /// - Returns: the line without its ending; `nil` for an empty line or end of input (meaning: no
    ///   password).
    /// - Throws: ``PasswordError/notATerminal`` when `input` is not a terminal (the attributes cannot be
    ///   read or set); ``PasswordError/tooLong(path:bytes:)`` past 1,024 bytes;
    ///   ``PasswordError/notUTF8(path:)``.
    public static func prompt(_ prompt: String, input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO) throws(PasswordError) -> String?
    {
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { throw .notATerminal }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(input, TCSAFLUSH, &silent) == 0 else { throw .notATerminal }
        write(prompt, to: output)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = systemRead(input, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != 0x0A else { break }
            if bytes.count <= ChatCodec.maxPasswordBytes { bytes.append(byte) }
        }
        _ = tcsetattr(input, TCSAFLUSH, &saved)
        write("\n", to: output)
        if bytes.last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { return nil }
        guard let password = String(bytes: bytes, encoding: .utf8) else { throw .notUTF8(path: "the terminal") }
        try check(password, from: "the terminal")
        return password
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                systemWrite(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// read(2), which ``PasswordInput/read(file:)`` hides inside the enum.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// write(2), which the enum's own `write` hides inside it.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// Why a password could not be had; never holds the password itself.
public enum PasswordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file at `path` cannot be read; `reason` says why.
    case unreadable(path: String, reason: String)
    /// The first line of the file at `path` is empty.
    case empty(path: String)
    /// The password from `path` is not UTF-8.
    case notUTF8(path: String)
    /// The password from `path` is longer than ``ChatCodec/maxPasswordBytes`` (1,024 bytes).
    case tooLong(path: String, bytes: Int)
    /// The prompt's input is not a terminal.
    case notATerminal

    /// One line for error messages.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read the password file \(path): \(reason)"
        case .empty(let path): return "the password in \(path) is empty (its first line)"
        case .notUTF8(let path): return "the password in \(path) is not UTF-8"
        case .tooLong(let path, let bytes):
            return "the password in \(path) has \(bytes) bytes; at most \(ChatCodec.maxPasswordBytes)"
        case .notATerminal: return "cannot prompt for a password: standard input is not a terminal"
        }
    }
}
