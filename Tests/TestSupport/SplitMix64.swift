/// A deterministic random number generator: SplitMix64 (Steele, Lea and Flood, "Fast Splittable
/// Pseudorandom Number Generators", OOPSLA 2014; constants as in Vigna's reference `splitmix64.c`).
///
/// The same seed gives the same sequence on every platform and run, so a failing "random" test can be
/// replayed exactly.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 pseudorandom bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// `count` pseudorandom bytes.
    public mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// `count` pseudorandom bytes drawn from `alphabet` only (e.g. to make delimiters likely or impossible).
    public mutating func bytes(count: Int, from alphabet: [UInt8]) -> [UInt8] {
        (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &self)] }
    }
}
