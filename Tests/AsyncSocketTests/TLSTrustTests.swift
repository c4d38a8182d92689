import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport

/// Manual trust evaluation (``TLSConfiguration/manuallyEvaluatesTrust``, GCDAsyncSocket's
/// `GCDAsyncSocketManuallyEvaluateTrust`): the handshake waits for the app's answer.
@Suite struct TLSTrustTests {
    private func next(_ delegate: RecordingDelegate) async throws -> SocketEvent {
        try await delegate.events.first { !$0.isProgress }
    }

    private func manualClient(_ files: TestCertificates, timeout: TimeInterval = 10) -> TLSConfiguration {
        var settings = TLSTests.clientSettings(files)
        settings.manuallyEvaluatesTrust = true
        settings.handshakeTimeout = timeout
        return settings
    }

    /// CocoaAsyncSocket #314 / swift-nio-ssl #603: the app says no after 2 s; nothing was secured or
    /// read meanwhile.
    @Test func theAppsNoAfterTwoSecondsMeansNeitherSecureNorData() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(TLSTests.serverSettings(files))
        accepted.write(Data("from the server\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        pair.client.startTLS(manualClient(files))
        pair.client.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 2)
        let question = try await next(pair.clientDelegate)
        guard case .receivedTrust(let trust) = question else {
            Issue.record("no trust question: \(question)")
            return
        }
        #expect(trust.verificationError == nil)  // the test CA is trusted: OpenSSL's own check passed
        #expect(trust.isTrustedByDefault)
        #expect(trust.peerName == "localhost")
        #expect(trust.certificateChain.count == 1)
        #expect(trust.certificateChain.first?.first == 0x30)  // a DER SEQUENCE
        #expect(trust.publicKeySHA256 == files.serverPublicKeyPin)
        try await Task.sleep(for: .seconds(2))  // the app deciding (not synchronisation)
        #expect(!pair.client.isSecure)
        #expect(pair.clientDelegate.answerTrust(false))
        #expect(try await next(pair.clientDelegate) == .disconnected(.tls(.certificateUntrusted("the app did not trust it"))))
        #expect(pair.clientDelegate.events.pending.isEmpty)  // the disconnect came right after the question
        // The client's alert: the server learns that its certificate was refused, not that it timed out.
        let serverEnd = try await pair.serverDelegate.events.first { $0.disconnectError != nil }
        #expect(serverEnd == .disconnected(.tls(.handshakeFailed("sslv3 alert handshake failure"))))
    }

    /// The handshake timeout does not count the app's time, in virtual time: a minute of deciding
    /// against a 10 s timeout, then "yes", and the connection is secured.
    @Test func theHandshakeTimeoutStopsWhileTheAppDecides() async throws {
        let files = try await TestCertificates.shared()
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "tls-trust-timeout")
        defer { group.shutdown() }
        // The client (whose handshake waits for the app) on the manual clock; the server on real time.
        let pair = try LoopbackPair(clientGroup: group)
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(TLSTests.serverSettings(files))
        pair.client.startTLS(manualClient(files, timeout: 10))
        let question = try await next(pair.clientDelegate)
        guard case .receivedTrust = question else {
            Issue.record("no trust question: \(question)")
            return
        }
        await clock.advance(by: .seconds(60))
        #expect(pair.client.isConnected)
        #expect(pair.clientDelegate.answerTrust(true))
        #expect(try await next(pair.clientDelegate) == .secured)
        await clock.advance(by: .seconds(60))
        #expect(pair.client.isConnected && pair.client.isSecure)
    }

    /// The app trusts a self-signed certificate OpenSSL would refuse; answered from another thread.
    @Test func theAppsYesTrustsASelfSignedServer() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(TLSTests.serverSettings(files, certificate: files.selfSignedCertificate, key: files.selfSignedKey))
        pair.client.startTLS(manualClient(files))
        pair.client.write(Data("hello\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        accepted.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(5), tag: 2)
        guard case .receivedTrust(let trust) = try await next(pair.clientDelegate) else {
            Issue.record("no trust question")
            return
        }
        #expect(trust.verificationError == .certificateUntrusted("self-signed certificate"))
        let delegate = pair.clientDelegate
        DispatchQueue.global().async { delegate.answerTrust(true) }
        #expect(try await next(pair.clientDelegate) == .secured)
        #expect(try await next(pair.clientDelegate) == .wrote(tag: 1))
        #expect(try await next(pair.serverDelegate) == .secured)
        #expect(try await next(pair.serverDelegate) == .read(Data("hello\n".utf8), tag: 2))
        #expect(!delegate.answerTrust(true))  // asked once
    }

    /// A pin still applies after the app said yes.
    @Test func aPinIsCheckedAfterTheAppsYes() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(TLSTests.serverSettings(files))
        var settings = manualClient(files)
        settings.pinnedPublicKeys = [Data(repeating: 7, count: 32)]
        pair.client.startTLS(settings)
        pair.client.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        guard case .receivedTrust = try await next(pair.clientDelegate) else {
            Issue.record("no trust question")
            return
        }
        pair.clientDelegate.answerTrust(true)
        let event = try await next(pair.clientDelegate)
        #expect(event == .disconnected(.tls(.pinMismatch(actual: files.serverPublicKeyPin.base64EncodedString()))))
    }

    @Test func aServerCannotEvaluateTrustManually() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        var settings = TLSTests.serverSettings(files)
        settings.manuallyEvaluatesTrust = true
        accepted.startTLS(settings)
        let event = try await next(pair.serverDelegate)
        guard case .disconnected(.tls(.badConfiguration(let reason))) = event else {
            Issue.record("not refused: \(event)")
            return
        }
        #expect(reason.contains("manual trust evaluation is for clients"))
    }
}
