import Foundation

/// A command line that cannot be used; `description` says why and how to call the program (the
/// executables print it and exit 64, `EX_USAGE`).
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(description: String) { self.description = description }
}
