@testable import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

/// A server ``TCPSocket`` with TLS on an embedded loop, and an in-memory OpenSSL client
/// (``TLSStage``): every `read(2)` of the server returns exactly the ciphertext the test chose, so
/// records arrive split at any byte and glued together, and every read kind is checked over TLS.
/// Synchronous after the certificates are made: an embedded loop belongs to the thread that made it.
private final class EmbeddedTLS {
    /// The socket on its embedded loop (EmbeddedSocketTests' fixture).
    let embedded: EmbeddedConnection
    let client: TLSStage
    private var writtenSeen = 0

    var io: ScriptedSocketIO { embedded.io }
    var loop: EventLoop { embedded.loop }
    var fd: Int32 { embedded.fd }
    var delegate: RecordingDelegate { embedded.delegate }
    var socket: TCPSocket { embedded.socket }

    init(_ files: TestCertificates, allowHalfClose: Bool = false) throws {
        embedded = EmbeddedConnection()
        embedded.socket.autoDisconnectOnClosedReadStream = !allowHalfClose
        embedded.socket.startTLS(TLSTests.serverSettings(files))
        client = try TLSStage(context: TLSContext(TLSTests.clientSettings(files)))
        embedded.loop.run()
    }

    /// Runs the handshake to its end, each flight delivered to the server as one read.
    func handshake() throws {
        for _ in 0..<10 {
            let done = try client.handshake()
            deliver(split: [Int.max])
            takeServerOutput()
            if case .done = done, socket.isSecure { return }
        }
        Issue.record("the handshake did not finish: \(delegate.events.all)")
    }

    /// The client's pending ciphertext, cut into reads of the sizes in `split` (cycled; `Int.max`: the
    /// rest at once), and the loop run.
    func deliver(split: [Int]) {
        var bytes = client.pendingCiphertext.readableBytes
        client.pendingCiphertext.reset(keepingCapacity: false)
        var index = 0
        while !bytes.isEmpty {
            let size = min(split[index % split.count], bytes.count)
            io.script(fd, reads: .bytes(Array(bytes.prefix(size))))
            bytes.removeFirst(size)
            index += 1
        }
        loop.run()
    }

    /// Encrypts `plaintext` on the client (one record per 16 KiB, as `SSL_write` cuts it).
    func clientSends(_ plaintext: Data) throws {
        _ = try plaintext.withUnsafeBytes { try client.write($0) }
    }

    /// Hands what the server wrote since the last call to the client.
    func takeServerOutput() {
        let written = io.written(fd)
        let fresh = Array(written[writtenSeen...])
        writtenSeen = written.count
        fresh.withUnsafeBytes { client.feed($0) }
    }

    /// The plaintext the client can read now (after ``takeServerOutput()``).
    func clientReceives() throws -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let outcome = try buffer.withUnsafeMutableBytes { try client.read(into: $0) }
            guard case .bytes(let count) = outcome else { return received }
            received.append(contentsOf: buffer[..<count])
        }
    }

    /// The non-progress events since the handshake, described.
    var events: [SocketEvent] { delegate.events.all.filter { !$0.isProgress && $0 != .secured } }
}

extension ReadBuffer {
    /// A copy of the readable bytes.
    fileprivate var readableBytes: [UInt8] { withUnsafeReadableBytes { Array($0) } }
}

/// The arrival patterns: one byte per read, whole records glued into one read, cuts just before and
/// after record boundaries (a 5-byte header, a record of 16 KiB + 22 bytes), and uneven sizes.
private let patterns: [(String, [Int])] = [
    ("one byte per read", [1]),
    ("everything glued in one read", [Int.max]),
    ("a header's 5 bytes, then the rest of a record", [5, 16_401]),
    ("cuts one byte off the record boundaries", [4, 16_403, 2]),
    ("uneven sizes", [3, 1_000, 7, 17_000, 64, 2])
]

@Suite struct TLSEmbeddedTests {
    /// Every read kind, queued before the bytes arrive, over every arrival pattern: each completes with
    /// exactly its bytes.
    @Test(arguments: patterns.map(\.0))
    func everyReadKindOverEveryArrivalPattern(pattern: String) async throws {
        let files = try await TestCertificates.shared()
        try readKinds(files, split: patterns.first { $0.0 == pattern }?.1 ?? [1])
    }

    private func readKinds(_ files: TestCertificates, split: [Int]) throws {
        let tls = try EmbeddedTLS(files)
        try tls.handshake()
        let big = patternBytes(17_000, multiplier: 7, shift: 3)  // two records
        let line = Data("a line ends here\r\n".utf8)
        let consumed = LockedValue(Data())
        // 4-byte big-endian length prefix frames, consumed as they complete.
        let frame = Data([0, 0, 0, 5]) + Data("frame".utf8)
        tls.socket.readData(toLength: UInt(big.count), withTimeout: -1, tag: 1)
        tls.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 2)
        tls.socket.read(
            .consuming(
                { bytes in
                    guard bytes.count >= 18 else { return .needMoreData(consumed: 0) }
                    consumed.withLock { $0 = Data(bytes.prefix(18)) }
                    return .complete(consumed: 18)
                }, maxLength: 0), timeout: -1, tag: 3
        ) { result in
            if case .failure(let error) = result { Issue.record("the consuming read failed: \(error)") }
        }
        tls.socket.readData(withTimeout: -1, maxLength: 3, tag: 4)
        tls.loop.run()
        try tls.clientSends(big + line + frame + frame + Data("xyz!".utf8))
        tls.deliver(split: split)
        #expect(consumed.withLock { $0 } == frame + frame)
        #expect(tls.events == [.read(big, tag: 1), .read(line, tag: 2), .read(Data("xyz".utf8), tag: 4)])
        #expect(tls.socket.bufferedReadBytes == 1)  // "!" for the next read
        #expect(tls.socket.isConnected)
    }

    /// A read to a delimiter that does not come within its maxLength fails over TLS as in plaintext.
    @Test func aDelimiterReadMaxesOutOverTLS() async throws {
        let files = try await TestCertificates.shared()
        let tls = try EmbeddedTLS(files)
        try tls.handshake()
        tls.socket.readData(to: TCPSocket.lfData, withTimeout: -1, maxLength: 100, tag: 1)
        try tls.clientSends(Data(repeating: 0x61, count: 150))
        tls.deliver(split: [7])
        #expect(tls.events.last == .disconnected(.readMaxedOut(maxLength: 100)))
    }

    /// Bytes received through TLS and not read are handed back by socketWillDisconnect when garbage
    /// (a record that does not decrypt) ends the connection.
    @Test func unreadPlaintextIsHandedBackWhenGarbageEndsTheConnection() async throws {
        let files = try await TestCertificates.shared()
        let tls = try EmbeddedTLS(files)
        try tls.handshake()
        tls.socket.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        try tls.clientSends(Data("first\nunread part".utf8))
        tls.deliver(split: [Int.max])
        // An application-data record whose ciphertext is garbage.
        tls.io.script(tls.fd, reads: .bytes([0x17, 0x03, 0x03, 0x00, 0x20] + Array(repeating: 0x42, count: 32)))
        tls.loop.run()
        #expect(tls.events.count == 3, "\(tls.events)")
        #expect(tls.events.first == .read(Data("first\n".utf8), tag: 1))
        #expect(tls.events.dropFirst().first == .willDisconnect(unread: Data("unread part".utf8), unsentTags: []))
        guard case .disconnected(.tls(.protocolError(let reason))) = tls.events.last else {
            Issue.record("not a TLS protocol error: \(tls.events)")
            return
        }
        #expect(reason == "decryption failed or bad record mac")
        #expect(tls.io.isClosed(tls.fd))
    }

    /// The peer's close_notify, then FIN, with half-close allowed: the read stream closes and the
    /// socket can still answer through TLS before closing its own side with close_notify.
    @Test func closeNotifyThenFINIsAHalfCloseOverTLS() async throws {
        let files = try await TestCertificates.shared()
        let tls = try EmbeddedTLS(files, allowHalfClose: true)
        try tls.handshake()
        tls.socket.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        try tls.clientSends(Data("last words\n".utf8))
        tls.client.close()
        tls.deliver(split: [Int.max])
        tls.io.script(tls.fd, reads: .endOfStream)
        tls.loop.run()
        #expect(tls.events == [.read(Data("last words\n".utf8), tag: 1), .readStreamClosed])
        tls.socket.write(Data("goodbye\n".utf8), withTimeout: -1, tag: 2)
        tls.socket.disconnectAfterWriting()
        tls.loop.run()
        tls.takeServerOutput()
        #expect(try tls.clientReceives() == Data("goodbye\n".utf8))
        // The server's close_notify came after it: the client's next read sees the end.
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try buffer.withUnsafeMutableBytes { try tls.client.read(into: $0) } == .closed)
        #expect(tls.io.isClosed(tls.fd))
    }

    /// The first 5 bytes of a ClientHello and FIN, with half-close allowed: the server fails the
    /// handshake and closes its descriptor (it does not sit half-open).
    @Test func aTruncatedClientHelloAndFINCloseTheServerEvenWithHalfCloseAllowed() async throws {
        let files = try await TestCertificates.shared()
        let tls = try EmbeddedTLS(files, allowHalfClose: true)
        tls.socket.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        tls.io.script(tls.fd, reads: .bytes([0x16, 0x03, 0x01, 0x02, 0x00]), .endOfStream)
        tls.loop.run()
        #expect(tls.delegate.events.all.last == .disconnected(.tls(.unexpectedEOF)))
        #expect(tls.io.isClosed(tls.fd))
    }

    /// Backpressure (a regression: one large write used to be encrypted whole, 4 MiB of ciphertext held
    /// for a peer that takes nothing): with the kernel taking nothing, the plaintext stays queued (counted against the
    /// high watermark) and the ciphertext held is bounded; as space comes, everything goes, in order.
    @Test func aStalledPeerHoldsBackPlaintextNotCiphertext() async throws {
        let files = try await TestCertificates.shared()
        let tls = try EmbeddedTLS(files)
        try tls.handshake()
        tls.io.setSendSpace(tls.fd, 0)
        tls.socket.writeHighWatermark = 1 << 20
        let payload = patternBytes(4 << 20, multiplier: 13, shift: 5)
        tls.socket.write(payload, withTimeout: -1, tag: 1)
        tls.loop.run()
        #expect(tls.events == [.highWatermark(4 << 20)])
        // At most 256 KiB of ciphertext (plus one record) waits in the stage; the rest is plaintext.
        let held = tls.loop.runAndWait { [socket = tls.socket] in socket.lifecycle.connection?.tls?.stage?.pendingCiphertext.count ?? -1 }
        #expect(held > 0 && held <= (256 << 10) + 16 * 22)  // 256 KiB of plaintext in 16 records
        var received = Data()
        for _ in 0..<2_000 where received.count < payload.count {
            tls.io.addSendSpace(tls.fd, 100_000)
            tls.loop.run()
            tls.takeServerOutput()
            received += try tls.clientReceives()
        }
        #expect(received == payload)
        #expect(tls.events.contains(.wrote(tag: 1)))
    }
}
