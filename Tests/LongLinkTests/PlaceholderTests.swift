import Testing
@testable import LongLink

@Test func placeholder() { #expect(1 + 1 == 2) }
