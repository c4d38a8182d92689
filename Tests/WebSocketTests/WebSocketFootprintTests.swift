import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
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
