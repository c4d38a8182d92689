import LongLink

extension Endpoint {
    /// The endpoint `im-client --server` names: `HOST:PORT`, with an IPv6 address in brackets
    /// (`chat.example:7777`, `127.0.0.1:7000`, `[::1]:7000`), the port from 1 to 65535; `nil` for
    /// anything else (no port, an empty host, an IPv6 address without brackets such as `::1:7000`,
    /// text after the closing bracket other than `:PORT`). The host is not resolved here.
    package init?(serverArgument text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            // A bare IPv6 address: which colon ends it is anyone's guess.
            guard !host.contains(":") else { return nil }
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, portText.allSatisfy(\.isASCIIDigit), let port = UInt16(portText), port > 0 else { return nil }
        self.init(host: String(host), port: port)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
