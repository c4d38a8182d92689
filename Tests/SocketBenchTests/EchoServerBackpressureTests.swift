import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport
@testable import SocketBench

/// A peer that sends without reading must not make the echo server queue without bound.
@Suite struct EchoServerBackpressureTests {
    /// 96 frames of 1 MiB go out from a client that never reads, with small socket buffers of its own.
    /// Without backpressure the server reads them all and queues the echoes, so the client's write queue
    /// empties; with it the server stops reading after 1 MiB of queued echoes, and the kernel buffers
    /// between the two (the server's receive buffer autotunes to a few MiB here, 32 MiB at most) leave
    /// most of the 96 MiB waiting in the client.
    @Test(arguments: [EchoServer.Mode.lp4, .lp4PerFrame])
    func aPeerThatDoesNotReadIsNotReadFromEither(mode: EchoServer.Mode) async throws {
        let server = EchoServer(mode: mode, loops: 1)
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }
        let delegate = RecordingDelegate()
        let client = TCPSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "client"))
        defer { client.disconnect() }
        client.receiveBufferSize = 64 << 10
        client.sendBufferSize = 64 << 10
        try client.connect(toHost: "127.0.0.1", onPort: port, withTimeout: TestTiming.hangTimeout(5))
        let payload = (1 << 20) - 4
        var frame = Data(withUnsafeBytes(of: UInt32(payload).bigEndian, Array.init))
        frame.append(Data(repeating: 0x5A, count: payload))
        for tag in 0..<96 { client.write(frame, withTimeout: -1, tag: tag) }

        // Wait (at most 20 s) until the client's queue stops shrinking for 300 ms.
        var last = client.queuedWriteBytes
        var stableSince = ContinuousClock.now
        let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(20))
        while ContinuousClock.now - stableSince < .milliseconds(300) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let now = client.queuedWriteBytes
            if now != last { (last, stableSince) = (now, ContinuousClock.now) }
        }
        #expect(client.isConnected)
        #expect(last >= 48 << 20, "only \(last) bytes still queued in the client: the server kept reading")
    }
}
