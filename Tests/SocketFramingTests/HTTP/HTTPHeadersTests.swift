import SocketFraming
import Testing

/// `HTTPHeaders`: fields in order, names matched in any case (RFC 9110 §5.1).
@Suite struct HTTPHeadersTests {
    @Test func removeTakesEveryFieldOfTheNameInAnyCaseAndKeepsTheOthersInOrder() {
        var headers: HTTPHeaders = [("Host", "a"), ("X-Seen", "1"), ("Accept", "*/*"), ("x-seen", "2")]
        headers.append(name: "X-SEEN", value: "3")
        #expect(headers.values(for: "x-seen") == ["1", "2", "3"])
        headers.remove(name: "X-Seen")
        #expect(headers.values(for: "x-seen") == [])
        #expect(headers.map(\.name) == ["Host", "Accept"])
        #expect(headers.map(\.value) == ["a", "*/*"])
    }
}
