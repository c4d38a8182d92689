import Foundation

extension BodiesV2 {
    /// The JSON body of a version 2 `loginAccepted`, written directly: byte for byte what the
    /// bodies' `JSONEncoder` (sorted keys, slashes as they are) writes, for strings with nothing to
    /// escape (no `"`, `\` or control character), which names and resume tokens are; nil otherwise,
    /// and the encoder writes it. Every login's answer lists up to 100 names online
    /// (`ChatServer.maxOnlineListed`), and the encoder's per-value work for them was most of a
    /// login's encoding when a failover's thousands of users logged in again at once (issue 35 §3).
    static func loginAcceptedBody(name: String, online: [String], onlineCount: Int, resumeToken: String, stored: Bool) -> Data? {
        var body = Data()
        body.reserveCapacity(96 + online.reduce(0) { $0 + $1.utf8.count + 3 } + name.utf8.count + resumeToken.utf8.count)
        func append(_ text: String) { body.append(contentsOf: text.utf8) }
        func appendString(_ text: String) -> Bool {
            guard !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            body.append(UInt8(ascii: "\""))
            append(text)
            body.append(UInt8(ascii: "\""))
            return true
        }
        append(#"{"name":"#)
        guard appendString(name) else { return nil }
        append(#","online":["#)
        for (index, other) in online.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            guard appendString(other) else { return nil }
        }
        append(#"],"onlineCount":\#(onlineCount),"resumeToken":"#)
        guard appendString(resumeToken) else { return nil }
        append(#","stored":\#(stored)}"#)
        return body
    }
}
