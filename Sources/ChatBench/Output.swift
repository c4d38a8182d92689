import Foundation

/// Lines to standard output and standard error, unbuffered, so a pipe or a log sees each at once.
enum Output {
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    static func complain(_ line: String) { FileHandle.standardError.write(Data(("chat-bench: " + line + "\n").utf8)) }
}
