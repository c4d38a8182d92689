import AsyncSocket
import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

/// Receiving on a ``UDPSocket``: once, continuously, paused, filtered; truncation reported, empty
/// datagrams delivered, batches in order. All on 127.0.0.1.
@Suite struct UDPSocketReceiveTests {
    /// A receiver bound to 127.0.0.1 (not receiving yet) and a sender bound there too.
    final class Pair: Sendable {
        let receiver = RecordedUDPSocket("receiver")
        let sender = RecordedUDPSocket("sender")
        let senderAddress: SocketAddress

        init() throws {
            try receiver.socket.bind(toPort: 0, interface: "127.0.0.1")
            try sender.socket.bind(toPort: 0, interface: "127.0.0.1")
            senderAddress = try #require(sender.socket.localAddress)
        }

        /// Sends `text` to the receiver and waits until it was sent.
        func send(_ text: String, tag: Int = 0) async throws {
            try await send(Data(text.utf8), tag: tag)
        }

        func send(_ data: Data, tag: Int = 0) async throws {
            sender.socket.send(data, to: try #require(receiver.socket.localAddress), withTimeout: TestTiming.hangTimeout(5), tag: tag)
            #expect(try await sender.next() == .sent(tag: tag))
        }

        func received(_ text: String, context: String? = nil) -> UDPEvent {
            .received(Data(text.utf8), from: senderAddress, context: context)
        }
    }

    @Test func receiveOnceDeliversOneDatagramThenStops() async throws {
        let pair = try Pair()
        try await pair.send("one")
        try await pair.send("two")
        try pair.receiver.socket.receiveOnce()
        #expect(try await pair.receiver.next() == pair.received("one"))
        pair.receiver.settle()
        #expect(pair.receiver.pending == [])
        try pair.receiver.socket.receiveOnce()
        #expect(try await pair.receiver.next() == pair.received("two"))
    }

    @Test func beginReceivingDeliversEveryDatagramInOrder() async throws {
        let pair = try Pair()
        try pair.receiver.socket.beginReceiving()
        for index in 0..<5 { try await pair.send("datagram \(index)", tag: index) }
        for index in 0..<5 { #expect(try await pair.receiver.next() == pair.received("datagram \(index)")) }
    }

    /// Forty datagrams queued at once go out in batches of `sendmmsg` and come in through batches of
    /// `recvmmsg`, every one whole and in order.
    @Test func batchesKeepEveryDatagramAndTheirOrder() async throws {
        let pair = try Pair()
        try pair.receiver.socket.beginReceiving()
        let destination = try #require(pair.receiver.socket.localAddress)
        for index in 0..<40 {
            pair.sender.socket.send(Data("batch \(index)".utf8), to: destination, withTimeout: TestTiming.hangTimeout(5), tag: index)
        }
        for index in 0..<40 { #expect(try await pair.sender.next() == .sent(tag: index)) }
        for index in 0..<40 { #expect(try await pair.receiver.next() == pair.received("batch \(index)")) }
    }

    @Test func pauseReceivingStopsDeliveryUntilReceivingBegins() async throws {
        let pair = try Pair()
        try pair.receiver.socket.beginReceiving()
        try await pair.send("before")
        #expect(try await pair.receiver.next() == pair.received("before"))
        pair.receiver.socket.pauseReceiving()
        try await pair.send("during")
        pair.receiver.settle()
        #expect(pair.receiver.pending == [])
        try pair.receiver.socket.beginReceiving()
        #expect(try await pair.receiver.next() == pair.received("during"))
    }

    @Test func anEmptyDatagramIsDeliveredAsEmpty() async throws {
        let pair = try Pair()
        try pair.receiver.socket.beginReceiving()
        try await pair.send(Data())
        try await pair.send("after")
        #expect(try await pair.receiver.next() == .received(Data(), from: pair.senderAddress, context: nil))
        #expect(try await pair.receiver.next() == pair.received("after"))
    }

    /// A datagram longer than the receive size is reported with its full length and never delivered
    /// cut short; it does not use up a receiveOnce, and the next datagram that fits arrives whole.
    @Test func aTruncatedDatagramIsReportedNotDelivered() async throws {
        let pair = try Pair()
        pair.receiver.socket.maxReceiveIPv4BufferSize = 10
        try await pair.send("eleven byte")
        try await pair.send("ten bytes!")
        try pair.receiver.socket.receiveOnce()
        #expect(try await pair.receiver.next() == .notReceived(from: pair.senderAddress, .datagramTruncated(size: 11, maxReceiveSize: 10)))
        #expect(try await pair.receiver.next() == pair.received("ten bytes!"))
        pair.receiver.settle()
        #expect(pair.receiver.pending == [])
    }

    /// Continuous receiving: the truncated datagram in the middle of a batch is reported in its place.
    @Test func truncationIsReportedInOrderWhileReceivingContinuously() async throws {
        let pair = try Pair()
        pair.receiver.socket.maxReceiveIPv4BufferSize = 4
        try pair.receiver.socket.beginReceiving()
        let destination = try #require(pair.receiver.socket.localAddress)
        for text in ["abcd", "abcde", "xyz"] {
            pair.sender.socket.send(Data(text.utf8), to: destination, withTimeout: TestTiming.hangTimeout(5), tag: 0)
        }
        #expect(try await pair.receiver.next() == pair.received("abcd"))
        #expect(try await pair.receiver.next() == .notReceived(from: pair.senderAddress, .datagramTruncated(size: 5, maxReceiveSize: 4)))
        #expect(try await pair.receiver.next() == pair.received("xyz"))
    }

    /// The filter's verdicts and contexts; a refused datagram does not use up "once". Run on the loop
    /// (no queue), on a queue synchronously and on a queue asynchronously.
    @Test(arguments: [FilterMode.onLoop, .synchronousQueue, .asynchronousQueue])
    func aRejectedDatagramDoesNotUseUpReceiveOnce(mode: FilterMode) async throws {
        let pair = try Pair()
        let seen = LockedValue<[String]>([])
        let filter: UDPSocket.ReceiveFilter = { data, _, context in
            let text = String(decoding: data, as: UTF8.self)
            seen.withLock { $0.append(text) }
            context = text.uppercased()
            return !text.hasPrefix("skip")
        }
        pair.receiver.socket.setReceiveFilter(filter, withQueue: mode.queue, isAsynchronous: mode == .asynchronousQueue)
        try await pair.send("skip 1")
        try await pair.send("skip 2")
        try await pair.send("take")
        try await pair.send("later")
        try pair.receiver.socket.receiveOnce()
        #expect(try await pair.receiver.next() == pair.received("take", context: "TAKE"))
        pair.receiver.settle()
        mode.queue?.sync {}
        pair.receiver.settle()
        #expect(pair.receiver.pending == [])
        #expect(seen.withLock { $0 } == ["skip 1", "skip 2", "take"])
        try pair.receiver.socket.receiveOnce()
        #expect(try await pair.receiver.next() == pair.received("later", context: "LATER"))
    }

    enum FilterMode: Sendable, CustomStringConvertible {
        case onLoop, synchronousQueue, asynchronousQueue

        var queue: DispatchQueue? {
            switch self {
            case .onLoop: return nil
            case .synchronousQueue: return Self.sharedQueue
            case .asynchronousQueue: return Self.sharedQueue
            }
        }

        static let sharedQueue = DispatchQueue(label: "filter")

        var description: String {
            switch self {
            case .onLoop: "on the loop"
            case .synchronousQueue: "synchronous on a queue"
            case .asynchronousQueue: "asynchronous on a queue"
            }
        }
    }

    @Test func receivingBeforeBindingIsABadConfiguration() throws {
        let socket = RecordedUDPSocket()
        #expect(
            throws: SocketError.badConfig(
                "Must bind socket before you can receive data. You can do this explicitly via bind, or implicitly via connect or by sending data."
            )
        ) {
            try socket.socket.receiveOnce()
        }
        #expect(socket.socket.isClosed)
    }

    /// IPv6 on ::1: bind, send, receive, with the sender's IPv6 address.
    @Test func ipv6OnTheLoopbackAddress() async throws {
        let receiver = RecordedUDPSocket("receiver6")
        let sender = RecordedUDPSocket("sender6")
        try receiver.socket.bind(toPort: 0, interface: "::1")
        #expect(receiver.socket.localHostIPv6 == "::1")
        #expect(receiver.socket.localAddressIPv4 == nil)
        #expect(receiver.socket.isIPv6 && !receiver.socket.isIPv4)
        try receiver.socket.beginReceiving()
        sender.socket.send(
            Data("over six".utf8), toHost: "::1", port: receiver.socket.localPortIPv6, withTimeout: TestTiming.hangTimeout(5), tag: 6)
        #expect(try await sender.next() == .sent(tag: 6))
        let from = try #require(SocketAddress(ipAddress: "::1", port: sender.socket.localPortIPv6))
        #expect(try await receiver.next() == .received(Data("over six".utf8), from: from, context: nil))
    }
}
