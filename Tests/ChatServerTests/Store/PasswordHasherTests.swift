@testable import ChatServer
import Foundation
import Testing

/// Argon2id hashes through libsodium. Every hash here uses the minimum limits (8 KiB, one pass), so
/// the suite takes milliseconds; the default limits only change the figures written in the hash.
@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(limits: .minimum)

    @Test func theLimitsAreLibsodiumsArgon2idFigures() {
        #expect(PasswordHasher().limits == .interactive)
        #expect(PasswordHasher.Limits.interactive == PasswordHasher.Limits(operations: 2, memoryBytes: 64 << 20))
        #expect(PasswordHasher.Limits.moderate == PasswordHasher.Limits(operations: 3, memoryBytes: 256 << 20))
        #expect(PasswordHasher.Limits.minimum == PasswordHasher.Limits(operations: 1, memoryBytes: 8 << 10))
    }

    @Test func aHashIsAnArgon2idStringWithItsLimitsAndARandomSalt() throws {
        let first = try hasher.hash("secret")
        let second = try hasher.hash("secret")
        #expect(first.hasPrefix("$argon2id$v=19$m=8,t=1,p=1$"))
        // 16-byte salt and 32-byte hash in unpadded base64: 22 + 1 + 43 characters after the prefix.
        #expect(first.utf8.count == 27 + 22 + 1 + 43)
        #expect(first != second)
    }

    @Test(arguments: ["secret", "", "pässwörd ☺ with spaces"])
    func theRightPasswordVerifiesAndAWrongOneDoesNot(_ password: String) throws {
        let hash = try hasher.hash(password)
        #expect(hasher.verify(password, against: hash))
        #expect(!hasher.verify(password + "x", against: hash))
        #expect(!hasher.verify(String(password.dropLast()) + "?", against: hash))
        // Verification reads the limits from the hash, whatever the hasher's own.
        #expect(PasswordHasher().verify(password, against: hash))
    }

    @Test func everyByteOfThePasswordCountsEvenAfterANul() throws {
        let hash = try hasher.hash("nul\u{0}inside")
        #expect(hasher.verify("nul\u{0}inside", against: hash))
        #expect(!hasher.verify("nul", against: hash))
        #expect(!hasher.verify("nul\u{0}outside", against: hash))
    }

    @Test func whatIsNotAHashVerifiesNothing() throws {
        let hash = try hasher.hash("secret")
        for broken in ["", "secret", "$argon2id$", String(hash.dropLast(5)), hash + "A", String(repeating: "$", count: 300)] {
            #expect(!hasher.verify("secret", against: broken), "\(broken)")
        }
    }

    @Test func aHashWithOtherLimitsNeedsARehash() throws {
        let hash = try hasher.hash("secret")
        #expect(!hasher.needsRehash(hash))
        #expect(PasswordHasher().needsRehash(hash))
        #expect(hasher.needsRehash("not a hash"))
    }
}
