import Foundation

/// Lines to standard output and standard error, unbuffered, so a pipe or a log sees each at once.
/// Safe from any thread.
public enum Output {
    /// `line` and a newline to standard output.
    public static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    /// `socket-bench: `, `line` and a newline to standard error.
    public static func complain(_ line: String) { FileHandle.standardError.write(Data(("socket-bench: " + line + "\n").utf8)) }
}
