/// SHA-1 (RFC 3174, FIPS 180-4 §6.1), for `Sec-WebSocket-Accept` only (RFC 6455 §4.2.2): SocketFraming
/// links no crypto library, and the handshake needs no collision resistance, only the same 20 bytes as
/// the peer. Not for anything secret.
package enum SHA1 {
    /// The 20-byte digest of `message`.
    package static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = Array(message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var words = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + index * 4
                words[index] = padded[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            }
            for index in 16..<80 { words[index] = rotate(words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16], 1) }
            compress(&state, words)
        }
        return state.flatMap { word in stride(from: 24, through: 0, by: -8).map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
    }

    /// The 80 rounds over one block's expanded words (RFC 3174 §6.1 step d–e).
    private static func compress(_ state: inout [UInt32], _ words: [UInt32]) {
        var (a, b, c, d, e) = (state[0], state[1], state[2], state[3], state[4])
        for index in 0..<80 {
            let (f, k): (UInt32, UInt32) =
                switch index {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
            let temp = rotate(a, 5) &+ f &+ e &+ k &+ words[index]
            (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
    }

    private static func rotate(_ word: UInt32, _ count: UInt32) -> UInt32 { word << count | word >> (32 - count) }
}
