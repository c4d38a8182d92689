@testable import AsyncSocket
import Glibc
import Testing

@Suite struct SyscallTests {
    /// One buffer goes out with send(2), several with sendmsg(2); both must pass MSG_NOSIGNAL.
    @Test(arguments: [(1, "send"), (2, "sendmsg")])
    func writingToAClosedPeerIsEPIPENotSIGPIPE(buffers: Int, call: String) throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        Posix.close(pair[1])
        defer { Posix.close(pair[0]) }
        let byte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: buffers)
        defer { byte.deallocate(); vectors.deallocate() }
        for index in 0..<buffers { vectors[index] = iovec(iov_base: byte, iov_len: 1) }
        // Without MSG_NOSIGNAL this would kill the test process with SIGPIPE.
        #expect(throws: SocketError.brokenPipe(operation: call, errno: EPIPE)) {
            try Posix.writev(pair[0], vectors)
        }
    }

    @Test func readingAnEmptyNonblockingSocketWouldBlock() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
        defer { pair.forEach(Posix.close) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        #expect(try Posix.read(pair[0], into: buffer) == .wouldBlock)
        #expect(Glibc.write(pair[1], "hi", 2) == 2)
        #expect(try Posix.read(pair[0], into: buffer) == .processed(2))
        Posix.close(pair[1])
        pair[1] = -1
        #expect(try Posix.read(pair[0], into: buffer) == .processed(0))
    }
}
