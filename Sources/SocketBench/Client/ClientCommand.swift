import Foundation

/// `socket-bench client MODE …`: placeholder until the client modes land.
enum ClientCommand {
    static func run(arguments: [String]) -> Int32 {
        FileHandle.standardError.write(Data("socket-bench: client modes are not built yet\n".utf8))
        return 64
    }
}
