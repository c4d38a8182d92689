import Testing
@testable import IMChat

@Test func placeholder() { #expect(1 + 1 == 2) }
