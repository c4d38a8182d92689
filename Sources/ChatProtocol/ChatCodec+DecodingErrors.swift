import Foundation

extension ChatCodec {
    /// Why a JSON body did not decode, in plain words for a log line or an error frame's detail (never
    /// Swift's debug description of a `DecodingError`): `missing key "text"`, `"to" is not a string`,
    /// `"positions.room" is not a number`, `not JSON`. Errors other than `DecodingError` give their
    /// `localizedDescription`.
    public static func plainWords(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return error.localizedDescription }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \"\(path(context.codingPath + [key]))\""
        case .typeMismatch(let type, let context):
            return context.codingPath.isEmpty
                ? "the body is not \(kind(of: type))" : "\"\(path(context.codingPath))\" is not \(kind(of: type))"
        case .valueNotFound(let type, let context):
            return context.codingPath.isEmpty ? "the body is null" : "\"\(path(context.codingPath))\" is null, not \(kind(of: type))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\"\(path(context.codingPath))\" has a value that is not allowed"
        @unknown default:
            return "not the JSON this message needs"
        }
    }

    /// `positions.room`, `names[3]`: keys joined by dots, array positions in brackets.
    private static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// What a JSON value of `type` is called: a string, a number, true or false, a list, an object.
    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is any BinaryInteger.Type, is Double.Type, is Float.Type: return "a number"
        case is [Any].Type: return "a list"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array<") { return "a list" }
            return "an object"
        }
    }
}
