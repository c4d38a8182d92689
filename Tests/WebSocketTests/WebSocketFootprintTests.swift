import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
@testable import WebSocket

#if canImport(Glibc)
    /// glibc's malloc_usable_size(3) (malloc.h, not in the Glibc module): the bytes of a heap block.
    @_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int

    /// What one accepted connection's ``WebSocket`` object takes on the heap (issue 33 §5: ≤ 1.5 KiB per
    /// idle connection in all, TCP included).
    @Suite struct WebSocketFootprintTests {
        /// Regression: a server's WebSocket held a client's settings and opening handshake inline (861
        /// bytes of its 1,136: `ClientConfiguration` 348, `Opening?` 513), so each idle server connection
        /// cost ~2.85 KB of RSS instead of ~2 KB (socket-bench idle, 10,000 connections).
        @Test func aServersWebSocketHoldsNoClientStateInline() {
            let socket = TCPSocket(delegate: nil, delegateQueue: nil)
            let webSocket = WebSocket(
                upgraded: socket, role: .server, handler: WebSocketProtocolHandler(role: .server), delegate: nil,
                delegateQueue: DispatchQueue(label: "footprint"), startsReading: false)
            let bytes = mallocUsableSize(Unmanaged.passUnretained(webSocket).toOpaque())
            #expect(bytes < 512, "\(bytes) bytes")
            #expect(webSocket.opening == nil)
        }

        /// Regression (issue 33 §5, 2,317 → 1,5xx B of RSS per idle connection at 10,000): a server's
        /// WebSocket is one object of at most 264 usable bytes (its protocol handler's rarely used parts
        /// boxed: deflate codec, closing-handshake data, async hooks) and its socket's delegate one of at most
        /// 56 (a weak owner and the keep-alive list's links, no closures: seven closures were ~300 B).
        ///
        /// malloc may hand out a block 16 bytes larger than asked when it has one free (a smaller
        /// remainder is not split off), so the smallest of 64 blocks is the one measured: with eight, a
        /// full run's free lists held enough larger blocks for all of them (280 bytes, 1 run in 6).
        @Test func anIdleServerConnectionIsTwoSmallObjects() {
            let socket = TCPSocket(delegate: nil, delegateQueue: nil)
            let webSockets = (0..<64).map { _ in
                WebSocket(
                    upgraded: socket, role: .server, handler: WebSocketProtocolHandler(role: .server), delegate: nil,
                    delegateQueue: nil, startsReading: false)
            }
            let bytes = webSockets.map { mallocUsableSize(Unmanaged.passUnretained($0).toOpaque()) }.min() ?? 0
            let callbacks = webSockets.map { mallocUsableSize(Unmanaged.passUnretained($0.callbacks).toOpaque()) }.min() ?? 0
            #expect(bytes <= 264, "WebSocket: \(bytes) bytes")
            #expect(callbacks <= 56, "callbacks: \(callbacks) bytes")
            #expect(MemoryLayout<WebSocketProtocolHandler>.size <= 160, "handler: \(MemoryLayout<WebSocketProtocolHandler>.size)")
            #expect(MemoryLayout<WebSocketKeepAlive?>.size <= 24)
            #expect(MemoryLayout<WebSocketCloseHandshake.State>.size <= 8)
        }

        /// Regression: every idle connection held a loop timer of its own for keep-alive (a `Scheduled`,
        /// a heap entry and two closures, ~200 B). Eight idle connections on one loop now share one: the
        /// loop holds one timer (the keep-alive list's), and the same one as with a single connection.
        @Test func idleConnectionsOnALoopShareOneKeepAliveTimer() async throws {
            let clock = ManualClock()
            let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "footprint-timers")
            defer { group.shutdown() }
            let loop = group.next()
            let server = EchoListenerDelegate()
            let listener = try server.start(group: group)
            defer { listener.stop() }
            var peers: [RawWebSocketPeer] = []
            defer { for peer in peers { peer.close() } }
            peers.append(try await RawWebSocketPeer(port: listener.port))
            await clock.settle()
            #expect(loop.runAndWait { loop.pendingTimerCount } == 1)
            for _ in 0..<7 { peers.append(try await RawWebSocketPeer(port: listener.port)) }
            await clock.settle()
            #expect(server.openCount == 8)
            #expect(loop.runAndWait { loop.pendingTimerCount } == 1)
        }

        @Test func aClientKeepsItsSettingsUntilItConnects() {
            var configuration = WebSocket.ClientConfiguration()
            configuration.subprotocols = ["chat"]
            final class Quiet: WebSocketDelegate {}
            let delegate = Quiet()
            let webSocket = WebSocket(client: configuration, delegate: delegate, delegateQueue: DispatchQueue(label: "footprint"))
            #expect(webSocket.pendingConfiguration.subprotocols == ["chat"])
            #expect(webSocket.opening == nil)
        }
    }
#endif
