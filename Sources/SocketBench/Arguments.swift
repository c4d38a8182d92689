/// A command-line argument that does not fit; its description says which and why.
public struct ArgumentError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, naming the flag.
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Walks command-line arguments, reading flags' values.
public struct ArgumentScanner {
    private var arguments: IndexingIterator<[String]>

    public init(_ arguments: [String]) { self.arguments = arguments.makeIterator() }

    public mutating func next() -> String? { arguments.next() }

    /// The argument after flag `name`.
    /// - Throws: ``ArgumentError`` when there is none.
    public mutating func value(for name: String) throws(ArgumentError) -> String {
        guard let value = arguments.next() else { throw ArgumentError("\(name) needs a value") }
        return value
    }

    /// The integer after flag `name`, which must lie in `range`.
    /// - Throws: ``ArgumentError`` when it is missing, not an integer, or out of range.
    public mutating func number<Number: FixedWidthInteger>(for name: String, in range: ClosedRange<Int>) throws(ArgumentError) -> Number {
        let text = try value(for: name)
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), range.contains(value),
            let number = Number(exactly: value)
        else {
            throw ArgumentError("\(name) needs an integer in \(range.lowerBound)...\(range.upperBound), not \(text)")
        }
        return number
    }

    /// The decimal number after flag `name` (seconds, messages per second), which must lie in `range`.
    /// - Throws: ``ArgumentError`` when it is missing, not a number, or out of range.
    public mutating func decimal(for name: String, in range: ClosedRange<Double>) throws(ArgumentError) -> Double {
        let text = try value(for: name)
        guard let value = Double(text.replacingOccurrences(of: "_", with: "")), range.contains(value) else {
            throw ArgumentError("\(name) needs a number in \(range.lowerBound)...\(range.upperBound), not \(text)")
        }
        return value
    }
}

/// What a subcommand's arguments come to: options to run with, or the exit status to stop with.
enum ParsedArguments<Options> {
    case run(Options)
    case exit(Int32)

    /// `--help` or `-h` anywhere prints `usage` (exit 0); arguments `parse` refuses print its error and
    /// `usage` on standard error (exit 64, as `sysexits.h`'s `EX_USAGE`); otherwise the options.
    static func parse(_ arguments: [String], usage: String, _ parse: ([String]) throws -> Options) -> ParsedArguments {
        if arguments.contains("--help") || arguments.contains("-h") {
            Output.say(usage)
            return .exit(0)
        }
        do {
            return .run(try parse(arguments))
        } catch {
            Output.complain("\(error)\n\(usage)")
            return .exit(64)
        }
    }
}
