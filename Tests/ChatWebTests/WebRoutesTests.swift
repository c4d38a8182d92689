import ChatWeb
import SocketFraming
import Testing

/// The route table as values: exact answers, with no socket.
@Suite struct WebRoutesTests {
    static func text(_ response: HTTPResponse) -> String { String(decoding: response.bytes, as: UTF8.self) }

    static let routes: WebRoutes = {
        var routes = WebRoutes()
        routes.add("/hello") { request in WebRoutes.ok("hello \(request.method)\n", contentType: "text/plain; charset=utf-8") }
        routes.add("/hello", method: "POST") { _ in WebRoutes.ok("posted\n", contentType: "text/plain; charset=utf-8") }
        return routes
    }()

    @Test func aRoutedPathAnswersItsHandlersResponseWithNosniffAndTheQueryIsIgnored() {
        #expect(
            Self.text(Self.routes.respond(to: HTTPRequestHead(method: "GET", target: "/hello?x=1")))
                == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\nConnection: close\r\n"
                + "\(securityFields)\r\nhello GET\n")
    }

    @Test func anotherMethodIs405WithTheAllowedOnes() {
        #expect(
            Self.text(Self.routes.respond(to: HTTPRequestHead(method: "DELETE", target: "/hello")))
                == "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 32\r\n"
                + "Connection: close\r\nAllow: GET, HEAD, POST\r\n\(securityFields)\r\nDELETE is not allowed on /hello\n")
    }

    /// `HEAD` of a `GET` route: the same status and fields, `Content-Length` included, and no body.
    @Test func headIsTheGetAnswerWithoutItsBody() {
        #expect(
            Self.text(Self.routes.respond(to: HTTPRequestHead(method: "HEAD", target: "/hello")))
                == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 11\r\nConnection: close\r\n"
                + "\(securityFields)\r\n")
        #expect(
            Self.text(Self.routes.respond(to: HTTPRequestHead(method: "HEAD", target: "/nowhere"))).hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    }

    @Test func anUnknownPathIs404() {
        #expect(
            Self.text(Self.routes.respond(to: HTTPRequestHead(method: "GET", target: "/hello/")))
                == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\n"
                + "Connection: close\r\n\(securityFields)\r\nnothing at /hello/\n")
    }
}
