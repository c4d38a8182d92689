import AsyncSocket
import Foundation
import Testing
import TestSupport

/// `write(copying:)`: bytes borrowed for the call, copied into the socket's staging buffer on its loop.
@Suite struct StagedWriteTests {
    @Test func stagedAndDataWritesGoOutInOrderAndCompleteInOrder() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let parts = ["alpha", "-beta-", "gamma", "-delta", "!"]
        server.eventLoop.execute {
            for (index, part) in parts.enumerated() {
                if index % 2 == 0 {
                    Array(part.utf8).withUnsafeBytes { server.write(copying: $0, withTimeout: TestTiming.hangTimeout(5), tag: index) }
                } else {
                    server.write(Data(part.utf8), withTimeout: TestTiming.hangTimeout(5), tag: index)
                }
            }
        }
        let total = parts.joined().utf8.count
        pair.client.readData(toLength: UInt(total), withTimeout: TestTiming.hangTimeout(5), tag: 9)
        #expect(try await pair.clientDelegate.events.next().description == #"read("alpha-beta-gamma-delta!", tag: 9)"#)
        let wrote = try await pair.serverDelegate.events.next(parts.count)
        #expect(wrote.map(\.description) == (0..<parts.count).map { "wrote(tag: \($0))" })
    }

    /// More staged bytes than the kernel takes at once: sent partly, in order, with nothing lost.
    @Test(.cpuBound) func manyStagedWritesBeyondTheSendBufferArriveWhole() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let chunk = 1000, chunks = 4000
        server.eventLoop.execute {
            var bytes = [UInt8](repeating: 0, count: chunk)
            for index in 0..<chunks {
                for offset in 0..<chunk { bytes[offset] = UInt8(truncatingIfNeeded: index &* 7 &+ offset) }
                bytes.withUnsafeBytes { server.write(copying: $0, withTimeout: TestTiming.hangTimeout(30), tag: index) }
            }
        }
        pair.client.readData(toLength: UInt(chunk * chunks), withTimeout: TestTiming.hangTimeout(30), tag: 1)
        guard case .read(let data, 1) = try await pair.clientDelegate.events.next(within: .seconds(30)) else {
            Issue.record("expected the read")
            return
        }
        // Built in place: 4 MB through flatMap and map cost a debug build seconds of a cooperative thread.
        var expected = Data(count: chunk * chunks)
        expected.withUnsafeMutableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            while index < chunk * chunks {
                bytes[index] = UInt8(truncatingIfNeeded: (index / chunk) &* 7 &+ index % chunk)
                index += 1
            }
        }
        #expect(data == expected)
        let wrote = try await pair.serverDelegate.events.next(chunks) { !$0.isProgress }
        #expect(wrote.map(\.description) == (0..<chunks).map { "wrote(tag: \($0))" })
    }

    @Test func fromAnotherThreadTheBytesAreCopiedBeforeTheCallReturns() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        var bytes = Array("first".utf8)
        bytes.withUnsafeBytes { server.write(copying: $0, withTimeout: TestTiming.hangTimeout(5), tag: 1) }
        bytes = Array("XXXXX".utf8)  // overwritten at once: the write has its own copy
        pair.client.readData(toLength: 5, withTimeout: -1, tag: 2)
        #expect(try await pair.clientDelegate.events.next().description == #"read("first", tag: 2)"#)
        #expect(bytes == Array("XXXXX".utf8))
    }
}
