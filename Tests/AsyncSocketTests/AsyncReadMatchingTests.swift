@testable import AsyncSocket
import Foundation
import Testing

/// The framing a ``TCPConnection`` does over the bytes it took from its socket.
@Suite struct AsyncReadMatchingTests {
    private func match(_ kind: AsyncReadKind, _ string: String, scanned: Int = 0) -> AsyncReadMatch {
        Data(string.utf8).withUnsafeBytes { kind.match($0, scanned: scanned) }
    }

    private let crlf = AsyncReadKind.upTo(delimiter: [0x0D, 0x0A], maxLength: 6)

    @Test func availableTakesAtLeastOneByteAndAtMostTheMaximum() {
        #expect(match(.available(maxLength: 2), "") == .needMore(scanned: 0))
        #expect(match(.available(maxLength: 2), "abc") == .complete(length: 2))
        #expect(match(.available(maxLength: .max), "abc") == .complete(length: 3))
    }

    @Test func exactlyWaitsForEveryByteAndZeroCompletesAtOnce() {
        #expect(match(.exactly(4), "abc") == .needMore(scanned: 3))
        #expect(match(.exactly(4), "abcde") == .complete(length: 4))
        #expect(match(.exactly(0), "") == .complete(length: 0))
    }

    @Test func delimiterSplitAcrossChunksIsFoundWhenTheSearchResumes() {
        #expect(match(crlf, "ab\r") == .needMore(scanned: 3))
        #expect(match(crlf, "ab\r\nz", scanned: 3) == .complete(length: 4))
    }

    @Test func maximumLengthIncludesTheDelimiter() {
        #expect(match(crlf, "1234\r\n") == .complete(length: 6))
        #expect(match(crlf, "12345\r\n") == .maxedOut(maxLength: 6))
        #expect(match(crlf, "12345") == .needMore(scanned: 5))
        #expect(match(crlf, "a\r\nb\r\n") == .complete(length: 3))
    }

    @Test func bytesWantedNeverAsksForMoreThanTheReadNeeds() {
        #expect(AsyncReadKind.exactly(10).bytesWanted(received: 4) == 6)
        #expect(crlf.bytesWanted(received: 2) == 4)
        #expect(AsyncReadKind.available(maxLength: 7).bytesWanted(received: 0) == 7)
    }

    @Test func receivedBytesHandOutTheirPrefixInOrder() {
        var received = AsyncReceivedBytes()
        received.append(Data("hello ".utf8))
        received.append(Data("world".utf8))
        #expect(received.match(.exactly(11), scanned: 0) == .complete(length: 11))
        #expect(String(decoding: received.take(6), as: UTF8.self) == "hello ")
        received.append(Data("!".utf8))
        #expect(String(decoding: received.take(10), as: UTF8.self) == "world!")
        #expect(received.isEmpty)
    }
}
