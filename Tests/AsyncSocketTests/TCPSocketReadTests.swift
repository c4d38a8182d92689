import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport

@Suite struct TCPSocketReadTests {
    /// Writes `chunks` one after another, each waiting for the previous to reach the kernel, so they
    /// arrive as separate reads (TCP_NODELAY is on).
    func send(_ chunks: [String], from socket: TCPSocket, delegate: RecordingDelegate) async throws {
        for (index, chunk) in chunks.enumerated() {
            socket.write(Data(chunk.utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1000 + index)
            _ = try await delegate.events.first { $0.description == "wrote(tag: \(1000 + index))" }
        }
    }

    @Test func delimiterSplitAcrossReadsIsFoundAndTheOverflowCarriesToTheNextRead() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 1)
        server.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 2)
        server.readData(toLength: 3, withTimeout: -1, tag: 3)
        // "\r" and "\n" arrive in different reads; the tail of one line comes with the next.
        try await send(["first\r", "\nsec", "ond\r\nxyz"], from: pair.client, delegate: pair.clientDelegate)
        let reads = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(reads.map(\.description) == [#"read("first\r\n", tag: 1)"#, #"read("second\r\n", tag: 2)"#, #"read("xyz", tag: 3)"#])
    }

    @Test func readsIntoACallersBufferAtAnOffset() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let buffer = NSMutableData(data: Data("HEADER:".utf8))
        server.readData(toLength: 5, withTimeout: -1, buffer: buffer, bufferOffset: 7, tag: 1)
        server.readData(to: TCPSocket.lfData, withTimeout: -1, buffer: buffer, bufferOffset: 2, maxLength: 10, tag: 2)
        server.readData(withTimeout: -1, buffer: nil, bufferOffset: 0, maxLength: 2, tag: 3)
        pair.client.write(Data("hello\nxy!".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        let reads = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(reads.map(\.description) == [#"read("hello", tag: 1)"#, #"read("\n", tag: 2)"#, #"read("xy", tag: 3)"#])
        // "hello" landed after the header; the second read overwrote byte 2 with "\n".
        #expect(String(decoding: buffer as Data, as: UTF8.self) == "HE\nDER:hello")
    }

    @Test func badRequestsAreRejectedWithTheirReasonInsteadOfDropped() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: 0, withTimeout: -1, tag: 1)
        server.readData(to: Data(), withTimeout: TestTiming.hangTimeout(5), tag: 2)
        server.readData(withTimeout: -1, buffer: NSMutableData(length: 3), bufferOffset: 4, tag: 3)
        server.readData(to: TCPSocket.crlfData, withTimeout: -1, maxLength: 1, tag: 4)
        server.write(Data(), withTimeout: TestTiming.hangTimeout(5), tag: 5)
        let idle = TCPSocket(delegate: pair.serverDelegate, delegateQueue: nil)
        idle.readData(withTimeout: -1, tag: 6)
        idle.write(Data("x".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 7)
        let rejections = try await pair.serverDelegate.events.next(7).map(\.description)
        #expect(
            Set(rejections) == [
                "rejectedRead(tag: 1, bad parameter: a read to length needs a length above 0)",
                "rejectedRead(tag: 2, bad parameter: a read to a delimiter needs a delimiter of at least one byte)",
                "rejectedRead(tag: 3, bad parameter: bufferOffset 4 is past the buffer's end (3 bytes))",
                "rejectedRead(tag: 4, bad parameter: maxLength 1 is shorter than the delimiter)",
                "rejectedWrite(tag: 5, bad parameter: a write needs at least one byte)",
                "rejectedRead(tag: 6, the socket is not connected or connecting)",
                "rejectedWrite(tag: 7, the socket is not connected or connecting)"
            ])
        #expect(server.isConnected)
    }
}
