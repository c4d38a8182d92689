import Foundation
import Testing

@testable import ChatProtocol

/// The version 2 `loginAccepted` body written directly (``BodiesV2/loginAcceptedBody(name:online:onlineCount:resumeToken:stored:)``)
/// is byte for byte the bodies' `JSONEncoder`'s, and leaves strings that need escaping to it.
@Suite struct LoginAcceptedBodyTests {
    static func encoded(_ name: String, _ online: [String], _ count: Int, _ token: String, _ stored: Bool) throws -> Data {
        try Bodies.encoder.encode(
            BodiesV2.LoginAccepted(name: name, online: online, onlineCount: count, resumeToken: token, stored: stored))
    }

    @Test func theBodyIsTheEncodersByteForByte() throws {
        let cases: [(String, [String], Int, String, Bool)] = [
            ("ann", [], 0, "6F9619FF-8B86-D011-B42D-00C04FC964FF", false),
            ("ann", ["bob", "cy"], 2, "t", true),
            ("Zoë", ["José", "日本", "a/b", "emoji 😀", "x y"], 12_345, "token/with/slashes", true),
            ("u", (0..<100).map { "user\($0)" }, 99_999, "", false)
        ]
        for (name, online, count, token, stored) in cases {
            let body = try #require(
                BodiesV2.loginAcceptedBody(name: name, online: online, onlineCount: count, resumeToken: token, stored: stored))
            #expect(
                String(decoding: body, as: UTF8.self)
                    == String(decoding: try Self.encoded(name, online, count, token, stored), as: UTF8.self))
        }
        let exact = BodiesV2.loginAcceptedBody(name: "ann", online: ["bob"], onlineCount: 1, resumeToken: "t", stored: true)
        #expect(
            exact.map { String(decoding: $0, as: UTF8.self) }
                == #"{"name":"ann","online":["bob"],"onlineCount":1,"resumeToken":"t","stored":true}"#)
    }

    @Test func stringsThatNeedEscapingAreLeftToTheEncoder() throws {
        for odd in ["quote\"", "back\\slash", "tab\t", "nul\u{0}", "line\n"] {
            #expect(BodiesV2.loginAcceptedBody(name: odd, online: [], onlineCount: 0, resumeToken: "t", stored: false) == nil)
            #expect(BodiesV2.loginAcceptedBody(name: "ann", online: ["bob", odd], onlineCount: 2, resumeToken: "t", stored: false) == nil)
            #expect(BodiesV2.loginAcceptedBody(name: "ann", online: [], onlineCount: 0, resumeToken: odd, stored: false) == nil)
        }
        // Through the bodies' encoding such a body is still the encoder's.
        let escaped = try BodiesV2.encode(
            .loginAccepted(name: "ann", online: ["b\"ob"], onlineCount: 1, resumeToken: "t", stored: false), with: Bodies.encoder)
        #expect(
            String(decoding: escaped, as: UTF8.self)
                == #"{"name":"ann","online":["b\"ob"],"onlineCount":1,"resumeToken":"t","stored":false}"#)
    }
}
