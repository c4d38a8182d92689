import AsyncSocket
import Foundation

/// Certificates and keys for the TLS tests, made once per test process with the `openssl` tool
/// (scripts/setup.sh installs it) in a temporary directory: no private key is committed. P-256 keys;
/// valid for two days from now unless said otherwise.
public struct TestCertificates: Sendable {
    /// The directory holding every file.
    public let directory: String
    /// The test CA's certificate (trust it to trust the others but the self-signed one).
    public var caCertificate: String { directory + "/ca.pem" }
    /// A certificate for `localhost`, 127.0.0.1 and ::1 (subject alternative names), signed by the CA,
    /// and its key.
    public var serverCertificate: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    /// The same names and key, signed by the CA, expired yesterday.
    public var expiredCertificate: String { directory + "/expired.pem" }
    /// A self-signed certificate for `localhost` and 127.0.0.1, and its key.
    public var selfSignedCertificate: String { directory + "/self-signed.pem" }
    public var selfSignedKey: String { directory + "/self-signed.key" }
    /// A client certificate (`CN=test client`, extended key usage clientAuth) signed by the CA, and its key.
    public var clientCertificate: String { directory + "/client.pem" }
    public var clientKey: String { directory + "/client.key" }

    /// The SHA-256 of the server key's DER SubjectPublicKeyInfo: its pin (``TLSConfiguration/pinnedPublicKeys``).
    public var serverPublicKeyPin: Data { (try? Data(contentsOf: URL(fileURLWithPath: directory + "/server.pin"))) ?? Data() }

    private static let made = LockedValue<Task<TestCertificates, any Error>?>(nil)

    /// The certificates, made on first use.
    public static func shared() async throws -> TestCertificates {
        let task = made.withLock { task in
            if let task { return task }
            let new = Task { try await TestCertificates.make() }
            task = new
            return new
        }
        return try await task.value
    }

    private static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        func openssl(_ arguments: [String]) async throws {
            let process = try ChildProcess("openssl", arguments)
            defer { process.stop() }
            guard try await process.exitStatus(within: .seconds(30)) == 0 else {
                throw ChildProcessError(
                    "openssl \(arguments.joined(separator: " ")): \(String(decoding: process.allOutput, as: UTF8.self))")
            }
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(
            ["req", "-x509"] + key + [
                "-keyout", "\(directory)/ca.key", "-out", certificates.caCertificate, "-days", "2",
                "-subj", "/CN=swift-async-socket test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign"
            ])
        let serverExtensions = "\(directory)/server.ext"
        try "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n".write(
            toFile: serverExtensions, atomically: true, encoding: .utf8)
        let clientExtensions = "\(directory)/client.ext"
        try "extendedKeyUsage=clientAuth\n".write(toFile: clientExtensions, atomically: true, encoding: .utf8)
        try await openssl(["req"] + key + ["-keyout", certificates.serverKey, "-out", "\(directory)/server.csr", "-subj", "/CN=localhost"])
        func sign(_ request: String, _ output: String, days: String, extensions: String) async throws {
            try await openssl([
                "x509", "-req", "-in", request, "-CA", certificates.caCertificate, "-CAkey", "\(directory)/ca.key",
                "-CAcreateserial", "-out", output, "-days", days, "-extfile", extensions
            ])
        }
        try await sign("\(directory)/server.csr", certificates.serverCertificate, days: "2", extensions: serverExtensions)
        try await sign("\(directory)/server.csr", certificates.expiredCertificate, days: "-1", extensions: serverExtensions)
        try await openssl(
            ["req", "-x509"] + key + [
                "-keyout", certificates.selfSignedKey, "-out", certificates.selfSignedCertificate,
                "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"
            ])
        try await openssl(
            ["req"] + key + ["-keyout", certificates.clientKey, "-out", "\(directory)/client.csr", "-subj", "/CN=test client"])
        try await sign("\(directory)/client.csr", certificates.clientCertificate, days: "2", extensions: clientExtensions)
        try await openssl(["pkey", "-in", certificates.serverKey, "-pubout", "-outform", "DER", "-out", "\(directory)/server.spki"])
        try await openssl(["dgst", "-sha256", "-binary", "-out", "\(directory)/server.pin", "\(directory)/server.spki"])
        return certificates
    }
}
