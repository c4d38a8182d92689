import Testing
@testable import AsyncSocket

@Test func placeholder() { #expect(1 + 1 == 2) }
