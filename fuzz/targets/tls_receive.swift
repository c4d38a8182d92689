// Fuzz target: the TLS receive path of a TCPSocket after a completed handshake, with garbage in the
// ciphertext. Each input sets up two TLS connections on one embedded event loop (no kernel: the
// socket's reads return scripted bytes): a TCPSocket on a fake descriptor at one end, the harness's own
// TLSStage at the other. Both handshakes are completed in memory. On connection A the far end encrypts
// messages (valid records, after any TLS 1.3 session tickets, maybe a close_notify), the input mutates
// that ciphertext (bit flips, inserted garbage, forged record headers, deletions, replays, truncation),
// cuts it into the socket's reads and maybe ends the stream; connection B carries a message at the same
// time and answers one after. The input also picks TLS 1.2 or 1.3, which end the socket is, and how the
// app reads. The harness traps, so that libFuzzer records a crash, when
//
// - anything traps or touches memory it should not (AddressSanitizer);
// - the plaintext the app got (reads, then the unread bytes reported at the disconnect) is not a prefix
//   of what was sent, or lacks a message whose records all arrived before the first changed byte;
// - the connection ends with anything but `SocketError.tls(.protocolError)` for a changed stream,
//   `.tls(.unexpectedEOF)` for an end of stream before close_notify, `.closedByPeer` after an intact
//   close_notify; or fails while the stream is unchanged; or a changed stream does not fail (once one
//   largest record of zeros more has come, should it wait for the rest of one);
// - the delegate hears of the connection after its disconnect, or its stage (left over after the error)
//   yields plaintext when fed the valid records from the one that was changed on;
// - the stage holds more unprocessed ciphertext than one record or ciphertext it has not flushed, or the
//   socket buffers more plaintext than was sent;
// - connection B does not deliver its message both ways, or fails.
//
// OpenSSL is not instrumented: the reasons it gives for refusing records become branches of the
// harness (noteReasons), so that libFuzzer keeps inputs that reach a new check.
@testable import AsyncSocket
import COpenSSL
import Foundation

// MARK: Certificates (once per process)

/// A P-256 key and a self-signed certificate for `localhost` (PEM each), made in memory at startup:
/// no private key is committed, and no `openssl` process runs.
let identity: (certificate: Data, key: Data) = makeIdentity()

/// Makes the identity and the contexts of every configuration before the first input.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzTLSReceiveInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    for server in [false, true] {
        for maximum in [TLSConfiguration.Version.tls12, .tls13] {
            do {
                _ = try TLSContext.shared(for: settings(server: server, maximum: maximum))
            } catch {
                fatalError("the TLS settings do not load: \(error)")
            }
        }
    }
    return 0
}

func makeIdentity() -> (certificate: Data, key: Data) {
    guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { fatalError("EVP_PKEY_CTX_new_from_name") }
    defer { EVP_PKEY_CTX_free(keyContext) }
    var generated: OpaquePointer?
    guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_CTX_set_group_name(keyContext, "P-256") == 1,
          EVP_PKEY_generate(keyContext, &generated) == 1, let key = generated
    else { fatalError("P-256 key generation failed") }
    defer { EVP_PKEY_free(key) }
    guard let certificate = X509_new() else { fatalError("X509_new") }
    defer { X509_free(certificate) }
    let name = X509_get_subject_name(certificate)
    let alternativeName = X509V3_EXT_conf_nid(nil, nil, NID_subject_alt_name, "DNS:localhost")
    defer { X509_EXTENSION_free(alternativeName) }
    guard X509_set_version(certificate, 2) == 1,  // v3
          ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1) == 1,
          X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
          X509_gmtime_adj(X509_getm_notAfter(certificate), 30 * 86400) != nil,
          X509_set_pubkey(certificate, key) == 1,
          X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "localhost", -1, -1, 0) == 1,
          X509_set_issuer_name(certificate, name) == 1,
          X509_add_ext(certificate, alternativeName, -1) == 1,
          X509_sign(certificate, key, EVP_sha256()) > 0
    else { fatalError("the self-signed certificate could not be made: \(TLSContext.takeErrors())") }
    return (pem { PEM_write_bio_X509($0, certificate) }, pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) })
}

/// LeakSanitizer cannot follow Swift's references to `Data` storage (an enum tag sits in the pointer's
/// spare bits), so the identity, kept for the whole process, would be reported as leaked at the first
/// leak check libFuzzer runs (after an input that allocates more than it frees).
@_cdecl("__lsan_default_suppressions")
public func leakSuppressions() -> UnsafePointer<CChar> {
    UnsafeRawPointer(("leak:makeIdentity\n" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}

/// What `write` puts into a memory BIO.
func pem(_ write: (OpaquePointer) -> Int32) -> Data {
    guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { fatalError("PEM_write: \(TLSContext.takeErrors())") }
    var bytes = [UInt8](repeating: 0, count: Int(cssl_bio_pending(bio)))
    guard BIO_read(bio, &bytes, Int32(bytes.count)) == Int32(bytes.count) else { fatalError("BIO_read") }
    return Data(bytes)
}

/// Settings for either end, with the highest version the input picked: the server with the identity,
/// the client trusting exactly it (full verification, as `localhost`).
func settings(server: Bool, maximum: TLSConfiguration.Version) -> TLSConfiguration {
    var configuration: TLSConfiguration
    if server {
        configuration = .server(certificateChain: .data(identity.certificate), privateKey: .data(identity.key))
    } else {
        configuration = .client(peerName: "localhost")
        configuration.trustRoots = .pem(identity.certificate)
    }
    configuration.maximumVersion = maximum
    return configuration
}

// MARK: One connection

/// The most ciphertext a stage may hold unprocessed once it has read all it can: one record's header
/// and its largest body (TLS 1.2's 2^14 + 2048; TLS 1.3's is smaller). A peer cannot make it buffer more.
let maxUnprocessedCiphertext = 5 + (1 << 14) + 2048

/// How the app reads from the socket under test.
enum ReadMode: CaseIterable {
    /// No read queued: everything stays buffered (reported as unread at the disconnect).
    case none
    /// Whatever is available, queued again at each completion.
    case available
    /// Exactly `chunk` bytes, queued again at each completion.
    case chunks
    /// One read to more than will ever come: the bytes collect in it.
    case never
}

/// What the delegate of a socket heard, checked as it comes.
final class Recorder: TCPSocketDelegate {
    var received: [UInt8] = []
    var unread: [UInt8] = []
    var isSecured = false
    /// The argument of `socketDidDisconnect`, once it came.
    var disconnect: SocketError??
    var readMode = ReadMode.none
    var chunk: UInt = 1

    /// Queues the read `readMode` asks for.
    func queueRead(_ socket: TCPSocket) {
        switch readMode {
        case .none: break
        case .available: socket.readData(withTimeout: -1, tag: 1)
        case .chunks: socket.readData(toLength: chunk, withTimeout: -1, tag: 2)
        case .never: socket.readData(toLength: 1 << 20, withTimeout: -1, tag: 3)
        }
    }

    func afterDisconnect(_ what: String) {
        if disconnect != nil { fatalError("\(what) after the disconnect (\(String(describing: disconnect)))") }
    }

    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        afterDisconnect("didRead(\(data.count) bytes)")
        received.append(contentsOf: data)
        queueRead(sock)
    }

    func socketDidSecure(_ sock: TCPSocket) {
        afterDisconnect("socketDidSecure")
        isSecured = true
    }

    func socketWillDisconnect(_ sock: TCPSocket, unreadData: Data, unsentWriteTags: [Int]) {
        afterDisconnect("socketWillDisconnect")
        unread = Array(unreadData)
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        afterDisconnect("socketDidDisconnect(\(String(describing: err)))")
        disconnect = .some(err)
    }
}

/// A socket on a fake descriptor of the embedded loop, and the harness's TLS stage at the far end.
final class Link {
    let loop: EventLoop
    let io: ScriptedSocketIO
    let fd: Int32
    let recorder = Recorder()
    let socket: TCPSocket
    /// The far end: the harness encrypts with it and reads what the socket sends.
    let peer: TLSStage
    /// Bytes of ``ScriptedSocketIO/written(_:)`` already handed to the peer.
    private var taken = 0

    /// Connects and completes the handshake; the socket is the server when `socketIsServer`.
    init(_ loop: EventLoop, _ io: ScriptedSocketIO, socketIsServer: Bool, maximum: TLSConfiguration.Version) {
        self.loop = loop
        self.io = io
        fd = io.makeDescriptor()
        socket = TCPSocket.embedded(fd: fd, on: loop, delegate: recorder)
        do {
            peer = try TLSStage(context: TLSContext.shared(for: settings(server: !socketIsServer, maximum: maximum)))
        } catch {
            fatalError("the far end's stage: \(error)")
        }
        socket.startTLS(settings(server: socketIsServer, maximum: maximum))
        loop.run()
        for _ in 0..<10 where !(recorder.isSecured && peer.isHandshakeDone) {
            toPeer()
            do {
                _ = try peer.handshake()
            } catch {
                fatalError("the handshake failed at the far end: \(error)")
            }
            // The peer's flight, while the socket still waits for one (a TLS 1.3 server's session
            // tickets, after its handshake, stay for the stream).
            if !recorder.isSecured && peer.pendingCiphertext.count > 0 { script([.bytes(takePeerCiphertext())]) }
            loop.run()
        }
        guard recorder.isSecured, peer.isHandshakeDone, recorder.disconnect == nil else {
            fatalError("the handshake did not finish: secured \(recorder.isSecured), far end \(peer.isHandshakeDone), "
                + "disconnect \(String(describing: recorder.disconnect))")
        }
        // A server socket's TLS 1.3 session tickets: the far end takes them as a client would.
        _ = readAtPeer()
    }

    /// Queues reads of the socket's descriptor.
    func script(_ reads: [ScriptedSocketIO.Read]) {
        for read in reads { io.script(fd, reads: read) }
    }

    /// Hands the socket's new ciphertext to the peer.
    func toPeer() {
        let written = io.written(fd)
        written[taken...].withUnsafeBytes { peer.feed($0) }
        taken = written.count
    }

    /// The ciphertext the peer produced since the last call.
    func takePeerCiphertext() -> [UInt8] {
        defer { peer.pendingCiphertext.reset(keepingCapacity: false) }
        return peer.pendingCiphertext.withUnsafeReadableBytes { Array($0) }
    }

    /// Encrypts `plaintext` at the peer (all of it: partial writes take whole records).
    func encrypt(_ plaintext: [UInt8]) -> [UInt8] {
        let count: Int
        do {
            count = try plaintext.withUnsafeBytes { bytes throws(TLSError) in try peer.write(bytes) }
        } catch {
            fatalError("the far end could not encrypt: \(error)")
        }
        if count != plaintext.count { fatalError("the far end took \(count) of \(plaintext.count) bytes") }
        return takePeerCiphertext()
    }

    /// The plaintext the socket sent the peer since the last call.
    func readAtPeer() -> [UInt8] {
        toPeer()
        var plaintext: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 14)
        while true {
            let outcome: TLSStage.ReadOutcome
            do {
                outcome = try buffer.withUnsafeMutableBytes { bytes throws(TLSError) in try peer.read(into: bytes) }
            } catch {
                fatalError("the far end could not read the socket's records: \(error)")
            }
            guard case .bytes(let count) = outcome else { return plaintext }
            plaintext.append(contentsOf: buffer[..<count])
        }
    }

    /// The socket's connection while it is connected.
    var connection: ConnectionState? { socket.lifecycle.connection }

    /// Traps when the socket's stage holds more than it should.
    func checkBounds(sent: Int) {
        guard let connection, let stage = connection.tls?.stage else { return }
        if stage.unprocessedCiphertext > maxUnprocessedCiphertext {
            fatalError("the stage holds \(stage.unprocessedCiphertext) bytes of unprocessed ciphertext, bound \(maxUnprocessedCiphertext)")
        }
        // Sends never block here, so nothing the stage produced may wait.
        if stage.pendingCiphertext.count > 0 { fatalError("\(stage.pendingCiphertext.count) bytes of ciphertext not flushed") }
        if connection.buffer.count > sent { fatalError("\(connection.buffer.count) bytes buffered of \(sent) sent") }
    }

    /// Ends the connection on purpose and runs the loop, so the socket and loop are freed.
    func close() {
        socket.disconnect()
        loop.run()
    }
}

// MARK: The stream and its mutations

/// The valid ciphertext connection A carries, and where its messages end.
struct Stream {
    var bytes: [UInt8] = []
    var sent: [UInt8] = []
    /// For each message, where its last record ends in `bytes` and how much plaintext was sent by then.
    var marks: [(end: Int, plaintext: Int)] = []
    /// Where the close_notify record ends, if the peer sent one.
    var closeNotifyEnd: Int?
}

/// Where the record of the valid stream `bytes` that holds offset `offset` starts (`bytes.count` past
/// the end): the records' headers give their lengths.
func recordStart(_ bytes: [UInt8], holding offset: Int) -> Int {
    var start = 0
    while start + 5 <= bytes.count {
        let end = start + 5 + (Int(bytes[start + 3]) << 8 | Int(bytes[start + 4]))
        if offset < end { return start }
        start = end
    }
    return bytes.count
}

/// A message of `length` bytes that differs from the others, so that a prefix check means something.
func message(_ index: Int, length: Int) -> [UInt8] {
    (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 64 &+ ($0 >> 8)) }
}

/// Applies one mutation the input describes to `bytes`: positions are taken modulo the current length.
func mutate(_ bytes: inout [UInt8], _ input: inout FuzzInput) {
    let kind = input.int(in: 0...6)
    let position = (Int(input.byte()) << 8 | Int(input.byte())) % (bytes.count + 1)
    switch kind {
    case 0:  // flip bits of one byte (never none)
        guard position < bytes.count else { return }
        bytes[position] ^= max(input.byte(), 1)
    case 1:  // insert garbage from the input
        bytes.insert(contentsOf: input.take(input.int(in: 1...16)), at: position)
    case 2:  // a record header (a type around the real ones, TLS 1.2's version, a length) and garbage
        let type = [0x14, 0x15, 0x16, 0x17, 0x18, input.byte()][input.int(in: 0...5)]
        let length = [0, 1, 16, 17, 255, 1 << 14, (1 << 14) + 256, (1 << 14) + 2048, 0xFFFF][input.int(in: 0...8)]
        let body = input.take(input.int(in: 0...32))
        bytes.insert(contentsOf: [type, 3, 3, UInt8(length >> 8), UInt8(length & 0xFF)] + body, at: position)
    case 3:  // delete
        bytes.removeSubrange(position..<min(bytes.count, position + input.int(in: 1...64)))
    case 4:  // replay: a copy of what follows, again right after it
        let copy = bytes[position..<min(bytes.count, position + 1 + input.int(in: 0...255) * 4)]
        bytes.insert(contentsOf: copy, at: position + copy.count)
    case 5:  // truncate
        bytes.removeSubrange(position...)
    default:  // overwrite a run with one byte
        let value = input.byte()
        for index in position..<min(bytes.count, position + input.int(in: 1...8)) { bytes[index] = value }
    }
}

/// Cuts `bytes` into reads of sizes drawn from `seed` (0: one read), as the FuzzHarness cuts streams,
/// into some 64 reads at most on average (a read at a time costs a loop round and a delegate call).
func cut(_ bytes: [UInt8], seed: UInt8) -> [[UInt8]] {
    var chunks: [[UInt8]] = []
    var state = UInt32(seed) &* 2_654_435_761 | 1
    var start = 0
    let largest = max(Int(seed) * 8 + 1, bytes.count / 32)
    while start < bytes.count {
        var size = bytes.count - start
        if seed != 0 {
            state = state &* 1_103_515_245 &+ 12345
            size = min(size, 1 + Int(state >> 16) % largest)
        }
        chunks.append(Array(bytes[start..<(start + size)]))
        start += size
    }
    return chunks
}

// MARK: OpenSSL's findings as coverage

/// How often each of OpenSSL's reasons for refusing records was seen (kept so that the branches that
/// count them are not optimised away).
nonisolated(unsafe) var reasonCounts = [Int](repeating: 0, count: 32)

/// Gives each reason OpenSSL states for a refused stream a branch of its own: OpenSSL is not
/// instrumented, so libFuzzer would not otherwise tell a bad MAC from a record overflow, and would keep
/// no input for reaching a new check. A `switch` on strings compiles to one comparison (one edge) each.
func noteReasons(_ reasons: String) {
    for reason in reasons.split(separator: "; ") {
        let index: Int
        switch reason {
        case "bad record type": index = 1
        case "decryption failed or bad record mac": index = 2
        case "cipher operation failed": index = 3
        case "wrong version number": index = 4
        case "packet length too long": index = 5
        case "encrypted length too long": index = 6
        case "record length mismatch": index = 7
        case "data length too long": index = 8
        case "record too small": index = 9
        case "length too short": index = 10
        case "bad length": index = 11
        case "invalid aad": index = 12
        case "internal error": index = 13
        case "unexpected message": index = 14
        case "unexpected record": index = 15
        case "ccs received early": index = 16
        case "bad change cipher spec": index = 17
        case "invalid ccs message": index = 18
        case "too many warn alerts": index = 19
        case "unknown alert type": index = 20
        case "bad key update": index = 21
        case "extra data in message": index = 22
        case "excessive message size": index = 23
        case "no renegotiation": index = 24
        case "bad packet length": index = 25
        case "application data after close notify": index = 26
        case "bad handshake length": index = 27
        case "length mismatch": index = 28
        default: index = reason.hasPrefix("tlsv1 alert") ? 29 : reason.hasPrefix("sslv3 alert") ? 30 : 0
        }
        reasonCounts[index] &+= 1
    }
}

// MARK: The target

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLSReceive(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let maximum: TLSConfiguration.Version = input.bool() ? .tls12 : .tls13
    let socketIsServer = input.bool()
    let readMode = ReadMode.allCases[input.int(in: 0...3)]
    let readLength = input.int(in: 1...64)
    let messageCount = input.int(in: 0...4)
    let closeNotify = input.int(in: 0...3) == 0
    let endOfStream = input.bool()
    let readBetweenChunks = input.bool()
    let chunkSeed = input.byte()

    let io = ScriptedSocketIO()
    let loop = EventLoop.embedded(io)
    let a = Link(loop, io, socketIsServer: socketIsServer, maximum: maximum)
    let b = Link(loop, io, socketIsServer: socketIsServer, maximum: maximum)
    // The valid stream: what the handshake left at the peer (a TLS 1.3 server's tickets), the
    // messages (mostly short, a few over one record's 16 KiB), maybe a close_notify.
    var stream = Stream(bytes: a.takePeerCiphertext())
    for index in 0..<messageCount {
        let lengthByte = input.int(in: 0...255)
        let plaintext = message(index, length: lengthByte < 240 ? lengthByte : (lengthByte - 239) * 1100)
        stream.bytes += plaintext.isEmpty ? [] : a.encrypt(plaintext)
        stream.sent += plaintext
        stream.marks.append((stream.bytes.count, stream.sent.count))
    }
    if closeNotify {
        a.peer.close()
        stream.bytes += a.takePeerCiphertext()
        stream.closeNotifyEnd = stream.bytes.count
    }

    // The garbage: mutations from the input, then what is left of it appended.
    var mutated = stream.bytes
    for _ in 0..<input.int(in: 0...4) { mutate(&mutated, &input) }
    mutated += input.rest()
    let intact = zip(stream.bytes, mutated).prefix { $0 == $1 }.count
    let isPrefix = intact == mutated.count  // nothing changed, at most cut short
    let due = stream.marks.last { $0.end <= intact }?.plaintext ?? 0
    let closeNotifyArrived = stream.closeNotifyEnd.map { $0 <= intact } ?? false

    a.recorder.readMode = readMode
    a.recorder.chunk = UInt(max(readLength, stream.sent.count / 32))  // some 32 reads at most
    a.recorder.queueRead(a.socket)
    b.recorder.readMode = .available
    b.recorder.queueRead(b.socket)

    // B's message goes in with A's stream, on the same loop.
    let bMessage = message(9, length: 100)
    b.script([.bytes(b.encrypt(bMessage))])
    let chunks = cut(mutated, seed: chunkSeed)
    for chunk in chunks {
        a.script([.bytes(chunk)])
        if readBetweenChunks {
            loop.run()
            a.checkBounds(sent: stream.sent.count)
        }
    }
    if endOfStream { a.script([.endOfStream]) }
    loop.run()
    a.checkBounds(sent: stream.sent.count)
    // A changed stream may leave the stage waiting for the rest of a record (a length made larger);
    // one largest record's worth of zeros more completes it, and then it must fail.
    if a.recorder.disconnect == nil && !isPrefix && !closeNotifyArrived {
        a.script([.bytes([UInt8](repeating: 0, count: maxUnprocessedCiphertext + 5))])
        loop.run()
        a.checkBounds(sent: stream.sent.count)
    }

    // How A ended, if it did.
    let ending = a.recorder.disconnect
    switch ending {
    case nil:
        if !isPrefix && !closeNotifyArrived { fatalError("a changed stream did not fail") }
        // After close_notify the socket may wait for the app to read what is buffered.
        if endOfStream && !closeNotifyArrived { fatalError("the stream ended without close_notify and the socket stayed connected") }
    case .some(.some(.tls(.protocolError(let reasons)))):
        noteReasons(reasons)
        if isPrefix { fatalError("protocolError on an unchanged stream (\(mutated.count) of \(stream.bytes.count) bytes)") }
    case .some(.some(.tls(.unexpectedEOF))):
        if !endOfStream { fatalError("unexpectedEOF before the end of the stream") }
        if closeNotifyArrived { fatalError("unexpectedEOF after an intact close_notify") }
    case .some(.some(.closedByPeer)):
        if !closeNotifyArrived { fatalError("closedByPeer without an intact close_notify") }
    case .some(let error):
        fatalError("the connection ended with \(String(describing: error))")
    }
    // After its error, the stage left over must stay failed: fed the valid records again from the
    // one the first changed byte is in (what it would decrypt next, had it not read garbage), it
    // yields no plaintext, and does not crash.
    if case .some(.some(.tls(.protocolError))) = ending, case .closed(_, let leftover?) = a.socket.lifecycle,
       let stage = leftover.tls?.stage {
        stream.bytes[recordStart(stream.bytes, holding: intact)...].withUnsafeBytes { stage.feed($0) }
        var buffer = [UInt8](repeating: 0, count: 1 << 14)
        for _ in 0..<4 {
            let outcome = try? buffer.withUnsafeMutableBytes { bytes throws(TLSError) in try stage.read(into: bytes) }
            if case .bytes(let count) = outcome { fatalError("the stage yielded \(count) bytes of plaintext after its error") }
        }
    }
    if ending == nil { a.close() }

    // Nothing received lost, nothing made up.
    let delivered = a.recorder.received + a.recorder.unread
    if delivered.count > stream.sent.count || !stream.sent.starts(with: delivered) {
        fatalError("\(delivered.count) bytes delivered of \(stream.sent.count) sent are not a prefix of them")
    }
    if delivered.count < due {
        fatalError("\(delivered.count) bytes delivered; the intact first \(intact) bytes of ciphertext carried \(due)")
    }
    if closeNotifyArrived && delivered.count != stream.sent.count {
        fatalError("\(delivered.count) bytes delivered of \(stream.sent.count) before an intact close_notify")
    }

    // B is untouched: its message arrived, an answer goes back, it is still connected.
    if b.recorder.received != bMessage { fatalError("B received \(b.recorder.received.count) bytes, not its \(bMessage.count)") }
    let answer = message(10, length: 50)
    b.socket.write(Data(answer), withTimeout: -1, tag: 4)
    loop.run()
    if b.readAtPeer() != answer { fatalError("B's answer did not arrive") }
    if let error = b.recorder.disconnect { fatalError("B disconnected: \(String(describing: error))") }
    b.close()
    return 0
}
