import Testing
@testable import SocketFraming

@Test func placeholder() { #expect(1 + 1 == 2) }
