import Foundation

/// A JSON value (RFC 8259), as held in the fields of a JSON header.
///
/// Numbers are `Double`, as in JavaScript: integers up to 2^53 are exact. `JSONHeaderFrameDecoder` parses
/// headers with its own RFC 8259 parser (linear, nesting at most 512 deep); as `Codable`, decoding tries,
/// in order, null, a Boolean, a number, a string, an array, then an object, so `true` is never a number
/// and `1` is never a Boolean.
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; its keys are unique, their order is not kept.
    case object([String: JSONValue])
}

extension JSONValue: Codable {
    /// Decodes any JSON value. Throws `DecodingError.typeMismatch` for something else (a value that is
    /// not JSON, such as a number too large for a `Double`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the JSON it stands for. Throws `EncodingError.invalidValue` for a number
    /// that is not finite (JSON has no NaN or infinity).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }
}
