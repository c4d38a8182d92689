import Foundation

extension PerMessageDeflate {
    /// The bytes one call inflates, refused once the message they belong to would pass its limit; the
    /// buffer grows by doubling but is never reserved beyond what the message may still hold.
    struct BoundedOutput {
        /// The message's limit, in bytes: what ``DecompressionError/messageTooBig(maxBytes:)`` reports.
        let maxMessageBytes: Int
        /// Bytes of the message inflated before this call (earlier fragments).
        let earlierBytes: Int
        private(set) var data = Data()
        /// The capacity asked of `data` so far.
        private(set) var reservedBytes = 0

        init(maxMessageBytes: Int, earlierBytes: Int) {
            self.maxMessageBytes = maxMessageBytes
            self.earlierBytes = earlierBytes
        }

        /// Bytes that may still be appended (0 when earlier fragments already reached the limit).
        var allowance: Int { max(0, maxMessageBytes - earlierBytes - data.count) }

        /// Appends `bytes`, or throws `messageTooBig` (appending nothing) when they pass the limit.
        mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) throws(DecompressionError) {
            guard bytes.count <= allowance else { throw .messageTooBig(maxBytes: maxMessageBytes) }
            guard !bytes.isEmpty else { return }
            let needed = data.count + bytes.count
            if needed > reservedBytes {
                reservedBytes = min(max(needed, reservedBytes * 2, 256), data.count + allowance)
                data.reserveCapacity(reservedBytes)
            }
            data.append(bytes)
        }
    }
}
