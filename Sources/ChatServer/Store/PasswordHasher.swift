import CSodium

/// Password hashes for claimed names: Argon2id (RFC 9106) through libsodium's `crypto_pwhash_str_alg`
/// (Debian's libsodium-dev, 1.0.18 here; https://doc.libsodium.org/password_hashing/default_phf).
///
/// A hash is a self-describing ASCII string of at most 127 characters (`crypto_pwhash_STRBYTES` 128
/// with its NUL) holding the algorithm, its limits, a random 16-byte salt and the 32-byte result:
/// `$argon2id$v=19$m=65536,t=2,p=1$<salt, base64>$<hash, base64>`. Only that string is stored, never
/// the password; ``verify(_:against:)`` reads the limits from it, so hashes made with other limits
/// keep verifying.
///
/// Cost: with ``Limits/interactive`` (the default) each ``hash(_:)`` and ``verify(_:against:)`` takes
/// 64 MiB of memory and about 0.1 s of one core (90 ms measured on the 2-core development box);
/// call them off a queue that must stay responsive. ``Limits/moderate``: 256 MiB, about 0.6 s. Tests
/// use ``Limits/minimum`` (8 KiB, one pass), which is fast and weak.
///
/// Threading: a value type; every method may be called from any thread, concurrently (libsodium is
/// thread-safe once `sodium_init` has run, which the first use does, once).
public struct PasswordHasher: Sendable, Equatable {
    /// Argon2id's cost: passes over memory, and memory in bytes.
    public struct Limits: Sendable, Equatable {
        /// Passes over the memory (Argon2's t), at least 1.
        public var operations: UInt64
        /// Memory used, in bytes (Argon2's m × 1 KiB), at least 8 KiB.
        public var memoryBytes: Int

        /// Limits with these values.
        public init(operations: UInt64, memoryBytes: Int) {
            self.operations = operations
            self.memoryBytes = memoryBytes
        }

        /// libsodium's interactive limits for Argon2id: 2 passes, 64 MiB
        /// (`crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE`, `…_MEMLIMIT_INTERACTIVE`).
        public static let interactive = Limits(
            operations: UInt64(crypto_pwhash_argon2id_opslimit_interactive()),
            memoryBytes: Int(crypto_pwhash_argon2id_memlimit_interactive()))

        /// libsodium's moderate limits for Argon2id: 3 passes, 256 MiB (`…_OPSLIMIT_MODERATE`,
        /// `…_MEMLIMIT_MODERATE`).
        public static let moderate = Limits(
            operations: UInt64(crypto_pwhash_argon2id_opslimit_moderate()),
            memoryBytes: Int(crypto_pwhash_argon2id_memlimit_moderate()))

        /// The least Argon2id accepts: 1 pass, 8 KiB (`…_OPSLIMIT_MIN`, `…_MEMLIMIT_MIN`). For tests only.
        public static let minimum = Limits(
            operations: UInt64(crypto_pwhash_argon2id_opslimit_min()),
            memoryBytes: Int(crypto_pwhash_argon2id_memlimit_min()))
    }

    /// Why a hash could not be made.
    public enum Failure: Error, Sendable, Equatable {
        /// libsodium could not initialise (`sodium_init` returned -1: no source of randomness).
        case sodiumUnavailable
        /// `crypto_pwhash_str_alg` failed: the memory limit could not be allocated, or the limits are
        /// below the minimum.
        case hashingFailed
    }

    /// The cost of new hashes.
    public var limits: Limits

    /// A hasher making hashes with `limits` (default ``Limits/interactive``).
    public init(limits: Limits = .interactive) {
        self.limits = limits
    }

    /// `sodium_init`, once per process (a `static let` is initialised once, thread-safely).
    private static let sodiumReady: Bool = sodium_init() >= 0

    /// A new hash of `password` (its UTF-8 bytes) with a new random salt: two hashes of one password
    /// differ. crypto_pwhash_str_alg(3) with `crypto_pwhash_ALG_ARGON2ID13`.
    /// - Throws: ``Failure``.
    public func hash(_ password: String) throws(Failure) -> String {
        guard Self.sodiumReady else { throw .sodiumUnavailable }
        // With its NUL, so the address is never null, even for "".
        var bytes = Array(password.utf8CString)
        defer { sodium_memzero(&bytes, bytes.count) }
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let result = crypto_pwhash_str_alg(
            &output, bytes, UInt64(bytes.count - 1), limits.operations, limits.memoryBytes, crypto_pwhash_alg_argon2id13())
        guard result == 0 else { throw .hashingFailed }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` is the one `hash` was made from; false also for a `hash` that is not one
    /// (empty, truncated, another algorithm's) or when libsodium cannot initialise. Takes as long as
    /// hashing with the limits written in `hash`. crypto_pwhash_str_verify(3).
    public func verify(_ password: String, against hash: String) -> Bool {
        guard Self.sodiumReady, hash.utf8.count < Int(crypto_pwhash_strbytes()) else { return false }
        var bytes = Array(password.utf8CString)
        defer { sodium_memzero(&bytes, bytes.count) }
        return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count - 1)) == 0
    }

    /// Whether `hash` was made with other limits than ``limits`` (or is not an Argon2id hash), so it
    /// should be replaced by a new hash at the next successful login. crypto_pwhash_str_needs_rehash(3).
    public func needsRehash(_ hash: String) -> Bool {
        guard Self.sodiumReady else { return true }
        return crypto_pwhash_str_needs_rehash(hash, limits.operations, limits.memoryBytes) != 0
    }
}
