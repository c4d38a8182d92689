/// One header field line of an HTTP/1.1 head (RFC 9110 §5): a name and its value, as received.
public struct HTTPField: Equatable, Sendable {
    /// The field name, a token (RFC 9110 §5.1), with the case it arrived in.
    public var name: String
    /// The field value with leading and trailing whitespace (SP, HTAB) removed (RFC 9112 §5.1). Bytes
    /// that are not valid UTF-8 (obs-text, RFC 9110 §5.5) are replaced by U+FFFD.
    public var value: String

    /// A field named `name` with `value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The header fields of an HTTP/1.1 head, in the order they arrived, looked up by name without regard to
/// case (RFC 9110 §5.1: field names are case-insensitive).
///
/// A name may occur several times; `values(for:)` returns every value in order, and `tokens(for:)` the
/// elements of them all read as one comma-separated list (RFC 9110 §5.3, §5.6.1).
public struct HTTPHeaders: Equatable, Sendable, Sequence, ExpressibleByArrayLiteral {
    /// The fields in order.
    public private(set) var fields: [HTTPField]

    /// Headers holding `fields` in order.
    public init(_ fields: [HTTPField] = []) { self.fields = fields }

    /// Headers from `(name, value)` pairs in order: `["Host": …]` reads as `[("Host", "…")]`.
    public init(arrayLiteral elements: (String, String)...) {
        fields = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }

    /// How many field lines there are.
    public var count: Int { fields.count }

    /// Adds a field after the others.
    public mutating func append(name: String, value: String) { fields.append(HTTPField(name: name, value: value)) }

    /// Removes every field named `name` (any case).
    public mutating func remove(name: String) { fields.removeAll { Self.sameName($0.name, name) } }

    /// Every value of fields named `name` (any case), in order; empty when there are none.
    public func values(for name: String) -> [String] { fields.filter { Self.sameName($0.name, name) }.map(\.value) }

    /// The first value of a field named `name` (any case), or nil.
    public func first(_ name: String) -> String? { fields.first { Self.sameName($0.name, name) }?.value }

    /// Whether a field named `name` (any case) is present.
    public func contains(_ name: String) -> Bool { fields.contains { Self.sameName($0.name, name) } }

    /// The elements of every field named `name`, read as one comma-separated list (RFC 9110 §5.6.1):
    /// split at commas, whitespace around each element removed, empty elements dropped. Quoted strings are
    /// not treated specially; use it for lists of tokens (`Connection`, `Upgrade`).
    public func tokens(for name: String) -> [String] {
        values(for: name).flatMap { value in
            value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingHTTPWhitespace() }
                .filter { !$0.isEmpty }
        }
    }

    /// Whether the comma-separated list of the fields named `name` has an element equal to `token`
    /// ignoring ASCII case, e.g. `Connection: keep-alive, Upgrade` contains `upgrade`.
    public func containsToken(_ token: String, for name: String) -> Bool {
        tokens(for: name).contains { Self.sameName($0, token) }
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[HTTPField]> { fields.makeIterator() }

    /// Whether two names (or tokens) are equal ignoring ASCII case.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { HTTPSyntax.lowercased($0) == HTTPSyntax.lowercased($1) }
    }
}

extension String {
    /// The string without leading and trailing SP and HTAB (HTTP's OWS, RFC 9110 §5.6.3).
    func trimmingHTTPWhitespace() -> String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !HTTPSyntax.isWhitespace($0) }),
            let last = bytes.lastIndex(where: { !HTTPSyntax.isWhitespace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

extension HTTPHeaders {
    /// Whether `field` can be written as is: its name a token, its value only bytes a field value may hold
    /// (no CR, LF, NUL or other control but HTAB; RFC 9110 §5.5) and no leading or trailing whitespace.
    public static func isValidField(_ field: HTTPField) -> Bool {
        HTTPSyntax.isToken(field.name) && field.value.utf8.allSatisfy(HTTPSyntax.isFieldValueByte)
            && field.value == field.value.trimmingHTTPWhitespace()
    }
}
