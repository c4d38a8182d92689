import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The headers of one `recvmmsg(2)` / `sendmmsg(2)` call, kept once per ``EventLoop`` and shared by its
/// ``UDPSocket``s: message headers, buffer vectors and address slots for up to ``capacity`` datagrams,
/// and ``receiveBuffer``, where received datagrams land (``capacity`` slots of 64 KiB, so a batch takes
/// 32 datagrams of any size an IPv4 or non-jumbo IPv6 datagram can have). Outgoing payloads are read by
/// the kernel from their own `Data`. An idle UDP socket holds no buffer at all, and a loop without UDP
/// sockets none of these. Loop thread only, within one call.
final class DatagramBatch {
    /// The most datagrams one call takes or sends: 32 (a batch of `recvmmsg`/`sendmmsg` larger than
    /// this saves little more per call and delays the other sockets of the loop).
    static let capacity = 32

    /// The bytes of one receive slot: 64 KiB, more than the longest IPv4 datagram (65,535 bytes).
    static let receiveSlotBytes = 1 << 16

    /// Where ``receive(_:count:slotBytes:scratch:_:)`` callers put datagrams: ``capacity`` slots of
    /// ``receiveSlotBytes`` (2 MiB of address space; only the pages datagrams touch become resident). The loop's
    /// 256 KiB ``EventLoop/scratch`` held only 4 slots of 64 KiB, so a `recvmmsg(2)` took at most 4
    /// datagrams, whatever their size.
    let receiveBuffer: UnsafeMutableRawBufferPointer

    /// Arrays for the datagrams one ``UDPSocket/channelReadable(_:)`` pass reads, lent for that pass.
    @exclusivity(unchecked) var spareArrivals = SpareArrays<UDPSocket.Arrival>()
    /// Arrays for the datagrams one ``send(_:_:)`` sends, lent for one batch.
    @exclusivity(unchecked) var spareOutgoing = SpareArrays<Outgoing>()

    private let headers: UnsafeMutableBufferPointer<cass_mmsghdr>
    private let vectors: UnsafeMutableBufferPointer<iovec>
    private let addresses: UnsafeMutableBufferPointer<sockaddr_storage>

    init() {
        headers = .allocate(capacity: DatagramBatch.capacity)
        headers.initialize(repeating: cass_mmsghdr())
        vectors = .allocate(capacity: DatagramBatch.capacity)
        vectors.initialize(repeating: iovec())
        addresses = .allocate(capacity: DatagramBatch.capacity)
        addresses.initialize(repeating: sockaddr_storage())
        receiveBuffer = .allocate(byteCount: DatagramBatch.capacity * DatagramBatch.receiveSlotBytes, alignment: 16)
    }

    /// Frees the storage; called by the loop's `deinit`.
    func deallocate() {
        headers.deallocate()
        vectors.deallocate()
        addresses.deallocate()
        receiveBuffer.deallocate()
    }

    /// Receives up to `count` datagrams from `fd` with one `recvmmsg(2)` (`MSG_TRUNC` asked, so each
    /// datagram's full length is known), each into its own `slotBytes`-byte slot of `scratch`, and calls
    /// `body` for each in arrival order with the bytes received (at most `slotBytes`), the sender, the
    /// datagram's full length in bytes and whether it was cut (longer than the slot). The bytes are
    /// valid only during `body`.
    ///
    /// - Returns: the number of datagrams received, or `nil` when none was waiting (`EAGAIN`).
    /// - Throws: the call's error (``SocketError/system(operation:errno:)`` with `recvmmsg`), for
    ///   example `ECONNREFUSED` from an ICMP port unreachable on a connected socket.
    func receive(
        _ fd: Int32, count: Int, slotBytes: Int, scratch: UnsafeMutableRawBufferPointer,
        _ body: (_ bytes: UnsafeRawBufferPointer, _ sender: SocketAddress?, _ fullLength: Int, _ truncated: Bool) -> Void
    ) throws(SocketError) -> Int? {
        let stride = max(1, slotBytes)
        let count = max(1, min(count, DatagramBatch.capacity, scratch.count / stride))
        let slot = min(slotBytes, scratch.count)
        guard let base = scratch.baseAddress else { return nil }
        for index in 0..<count {
            vectors[index] = iovec(iov_base: base + index * stride, iov_len: slot)
            headers[index] = cass_mmsghdr()
            headers[index].msg_hdr.msg_iov = vectors.baseAddress.map { $0 + index }
            headers[index].msg_hdr.msg_iovlen = 1
            headers[index].msg_hdr.msg_name = UnsafeMutableRawPointer(addresses.baseAddress.map { $0 + index })
            headers[index].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
        }
        let received: Int32
        switch try Posix.checkIO("recvmmsg", { Int(cass_recvmmsg(fd, headers.baseAddress, UInt32(count), cass_msg_trunc())) }) {
        case .wouldBlock: return nil
        case .processed(let value): received = Int32(value)
        }
        for index in 0..<Int(received) {
            let header = headers[index]
            let fullLength = Int(header.msg_len)
            let truncated = header.msg_hdr.msg_flags & cass_msg_trunc() != 0 || fullLength > slot
            let bytes = UnsafeRawBufferPointer(start: base + index * stride, count: min(fullLength, slot))
            let sender: SocketAddress? = addresses.baseAddress.flatMap { start in
                UnsafeRawPointer(start + index).withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: header.msg_hdr.msg_namelen)
                }
            }
            body(bytes, sender, fullLength, truncated)
        }
        return Int(received)
    }

    /// What one ``send(_:_:)`` did.
    enum SendOutcome: Equatable {
        /// The first `n` datagrams went out (fewer than offered: the next one would block or failed;
        /// offer it again to learn which).
        case sent(Int)
        /// The socket's send buffer is full: nothing went out.
        case wouldBlock
        /// The first datagram was refused with this error; nothing went out.
        case failed(SocketError)
    }

    /// The payload and destination of a datagram to send (`nil`: the connected peer).
    typealias Outgoing = (payload: Data, destination: SocketAddress?)

    /// Sends up to ``capacity`` of `datagrams` on `fd` with one `sendmmsg(2)` (destination `nil` on a
    /// connected socket). The kernel reads each payload from its own `Data`, borrowed for the call:
    /// nothing is copied here.
    func send(_ fd: Int32, _ datagrams: [Outgoing]) -> SendOutcome {
        prepare(0, count: min(datagrams.count, DatagramBatch.capacity), fd: fd, datagrams: datagrams)
    }

    /// Fills in the header of datagram `index`, pointing at its payload's bytes, which stay borrowed
    /// while the headers of the next ones are filled in and the call is made (one nested
    /// `withUnsafeBytes` per datagram, at most ``capacity`` deep), then sends the `count` prepared.
    private func prepare(_ index: Int, count: Int, fd: Int32, datagrams: [Outgoing]) -> SendOutcome {
        guard index < count else { return sendPrepared(fd, count: count) }
        headers[index] = cass_mmsghdr()
        headers[index].msg_hdr.msg_iov = vectors.baseAddress.map { $0 + index }
        headers[index].msg_hdr.msg_iovlen = 1
        if let destination = datagrams[index].destination {
            let slot = addresses.baseAddress.map { $0 + index }
            destination.withSockAddr { pointer, length in
                UnsafeMutableRawPointer(slot)?.copyMemory(from: pointer, byteCount: Int(length))
            }
            headers[index].msg_hdr.msg_name = UnsafeMutableRawPointer(slot)
            headers[index].msg_hdr.msg_namelen = destination.length
        }
        return datagrams[index].payload.withUnsafeBytes { raw in
            vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
            return prepare(index + 1, count: count, fd: fd, datagrams: datagrams)
        }
    }

    private func sendPrepared(_ fd: Int32, count: Int) -> SendOutcome {
        do {
            switch try Posix.checkIO("sendmmsg", { Int(cass_sendmmsg(fd, headers.baseAddress, UInt32(count), cass_msg_nosignal())) }) {
            case .wouldBlock: return .wouldBlock
            case .processed(let sent): return .sent(sent)
            }
        } catch {
            return .failed(error)
        }
    }
}

extension EventLoop {
    /// This loop's ``DatagramBatch``, made on first use. Loop thread only.
    var datagramBatch: DatagramBatch {
        if let batch = datagramBatchStorage { return batch }
        let batch = DatagramBatch()
        datagramBatchStorage = batch
        return batch
    }
}
