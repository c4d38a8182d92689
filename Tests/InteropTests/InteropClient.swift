#if os(Linux)
    import AsyncSocket
    import Dispatch
    import Foundation
    import Testing
    import TestSupport

    /// A ``TCPSocket`` connected to a server on loopback, with a ``RecordingDelegate`` on a serial queue of
    /// its own, and waits for the events a test expects next.
    ///
    /// Completed writes are recorded but skipped by the waits (their order is checked with
    /// ``writtenTags``); every other event must be the one expected, or the wait throws ``UnexpectedEvent``.
    struct InteropClient {
        let socket: TCPSocket
        let delegate: RecordingDelegate

        /// Connects to 127.0.0.1:`port` and waits for the connection.
        static func connect(to port: UInt16, within limit: Duration = .seconds(5)) async throws -> InteropClient {
            let delegate = RecordingDelegate()
            let socket = TCPSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "interop-client"))
            try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: TestTiming.hangTimeout(5))
            let client = InteropClient(socket: socket, delegate: delegate)
            let event = try await client.nextEvent(within: limit)
            guard case .connected(host: "127.0.0.1", port: port) = event else {
                throw UnexpectedEvent(expected: "connected(127.0.0.1:\(port))", got: event)
            }
            return client
        }

        /// ``connect(to:within:)``, then TLS with `settings`, returned once secured.
        static func connect(
            to port: UInt16, tls settings: TLSConfiguration, within limit: Duration = .seconds(5)
        ) async throws -> InteropClient {
            let client = try await connect(to: port, within: limit)
            client.socket.startTLS(settings)
            let event = try await client.nextEvent(within: limit)
            guard case .secured = event else { throw UnexpectedEvent(expected: "secured", got: event) }
            return client
        }

        /// The next event other than a completed write.
        func nextEvent(within limit: Duration = .seconds(10)) async throws -> SocketEvent {
            while true {
                let event = try await delegate.events.next(within: limit)
                if case .wrote = event { continue }
                return event
            }
        }

        /// The data of the next event, which must be a read with `tag`.
        func read(tag: Int, within limit: Duration = .seconds(10)) async throws -> Data {
            let event = try await nextEvent(within: limit)
            guard case .read(let data, tag) = event else { throw UnexpectedEvent(expected: "read(tag: \(tag))", got: event) }
            return data
        }

        /// The line (delimiter included) of the next event, which must be a read with `tag`.
        func readLine(tag: Int, within limit: Duration = .seconds(10)) async throws -> String {
            String(decoding: try await read(tag: tag, within: limit), as: UTF8.self)
        }

        /// The error of the next event, which must be the disconnection.
        func disconnection(within limit: Duration = .seconds(10)) async throws -> SocketError? {
            let event = try await nextEvent(within: limit)
            guard case .disconnected(let error) = event else { throw UnexpectedEvent(expected: "disconnected", got: event) }
            return error
        }

        /// Tags of the completed writes so far, in completion order.
        var writtenTags: [Int] {
            delegate.events.all.compactMap { if case .wrote(let tag) = $0 { tag } else { nil } }
        }

        /// True when a disconnection has been recorded, consumed or not.
        var hasDisconnected: Bool {
            delegate.events.all.contains { if case .disconnected = $0 { true } else { false } }
        }

        func close() { socket.disconnect() }
    }

    /// A wait got another event than the test expected.
    struct UnexpectedEvent: Error, CustomStringConvertible {
        let description: String
        init(expected: String, got event: SocketEvent) {
            let text = event.description
            let shown = text.count > 300 ? text.prefix(300) + "… (\(text.count) characters)" : Substring(text)
            description = "expected \(expected), got \(shown)"
        }
    }

    /// Records an issue unless `actual` holds exactly the bytes of `expected`, naming the lengths and the
    /// first differing offset. (`#expect(a == b)` on megabytes of Data would have Swift Testing diff them,
    /// which takes minutes.)
    func expectSameBytes(
        _ actual: Data, _ expected: Data, _ what: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard actual != expected else { return }
        let mismatch =
            zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(actual.count, expected.count)
        Issue.record(
            "\(what()): \(actual.count) bytes, expected \(expected.count); first difference at offset \(mismatch)",
            sourceLocation: sourceLocation)
    }

    /// `count` deterministic pseudorandom bytes (SplitMix64 with `seed`, each word little-endian), the same
    /// on every run. Filled a word at a time through a raw buffer: byte by byte, the 24 MiB of
    /// `NginxTests.huge` held a debug build's cooperative thread for seconds.
    func deterministicBytes(_ count: Int, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        var data = Data(count: (count + 7) / 8 * 8)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                raw.storeBytes(of: random.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
        }
        return data.prefix(count)
    }
#endif
