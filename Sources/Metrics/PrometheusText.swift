/// The Prometheus text exposition format, version 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): its escapes and numbers.
public enum PrometheusText {
    /// The `Content-Type` of a scrape's body: `text/plain; version=0.0.4; charset=utf-8`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A `# HELP` docstring: backslash as `\\`, line feed as `\n` (the format's rule for HELP lines).
    public static func escapeHelp(_ text: String) -> String { escape(text, quote: false) }

    /// A label value between its double quotes: backslash as `\\`, `"` as `\"`, line feed as `\n`.
    public static func escapeLabelValue(_ value: String) -> String { escape(value, quote: true) }

    /// `text` with backslash and line feed escaped, and `"` too when `quote`.
    private static func escape(_ text: String, quote: Bool) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quote: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A sample value as Go's `ParseFloat` reads it: `+Inf`, `-Inf`, `NaN`, whole numbers below 2⁵³
    /// without a fraction (`3`, `-2`), anything else in Swift's shortest round-trip form (`0.0025`, `1e-05`).
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return String(value)
    }

    /// `{name="value",…}` for `names` and `values` (escaped), or nothing without labels.
    public static func labelSet(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        return "{" + zip(names, values).map { "\($0)=\"\(escapeLabelValue($1))\"" }.joined(separator: ",") + "}"
    }

    /// Whether `name` is a valid metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public static func isValidMetricName(_ name: String) -> Bool {
        isName(name, extra: ":")
    }

    /// Whether `name` is a valid label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
    public static func isValidLabelName(_ name: String) -> Bool {
        isName(name, extra: nil) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, extra: Unicode.Scalar?) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            scalar == "_" || scalar == extra || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                || ("0"..."9").contains(scalar)
        }
    }
}
