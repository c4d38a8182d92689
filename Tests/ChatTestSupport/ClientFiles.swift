import Foundation

/// A temporary directory with a password file in it (for `im-client --password-file`) and a data
/// directory, removed afterwards.
public final class ClientFiles: Sendable {
    public let directory: URL
    public let passwordFile: String
    public let dataDirectory: String

    public init(password: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-client-exe-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        passwordFile = directory.appendingPathComponent("password").path
        dataDirectory = directory.appendingPathComponent("data").path
        // The first line is the password: its line ending and the lines after it are not.
        try Data("\(password)\r\nnot the password\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}
