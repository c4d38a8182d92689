import Foundation

/// What one ``TCPConnection`` read waits for. The connection frames reads itself, over bytes it takes
/// from its ``TCPSocket`` with reads of available bytes, so that a read abandoned by task cancellation
/// never holds bytes back from the reads after it.
enum AsyncReadKind: Sendable {
    /// Whatever is available, at least one byte and at most `maxLength` (at least 1).
    case available(maxLength: Int)
    /// Exactly `length` bytes (0 or more).
    case exactly(Int)
    /// Up to and including `delimiter` (not empty), which must end within the first `maxLength` bytes
    /// (at least the delimiter's length).
    case upTo(delimiter: [UInt8], maxLength: Int)
}

/// How the received bytes meet a read.
enum AsyncReadMatch: Equatable {
    /// The first `length` bytes complete the read.
    case complete(length: Int)
    /// Not enough bytes; the first `scanned` hold no delimiter.
    case needMore(scanned: Int)
    /// `maxLength` bytes hold no delimiter.
    case maxedOut(maxLength: Int)
}

extension AsyncReadKind {
    /// Checks `bytes` (the received bytes no read has taken, oldest first) against this read. `scanned`
    /// is how many leading bytes an earlier call already searched for the delimiter.
    func match(_ bytes: UnsafeRawBufferPointer, scanned: Int) -> AsyncReadMatch {
        switch self {
        case .available(let maxLength):
            return bytes.isEmpty ? .needMore(scanned: 0) : .complete(length: min(maxLength, bytes.count))
        case .exactly(let length):
            return bytes.count >= length ? .complete(length: length) : .needMore(scanned: bytes.count)
        case .upTo(let delimiter, let maxLength):
            let limit = min(maxLength, bytes.count)
            // A delimiter may straddle the end of what was searched before: step back a little.
            let start = max(0, scanned - (delimiter.count - 1))
            if let end = AsyncReadKind.end(of: delimiter, in: bytes, from: start, upTo: limit) {
                return .complete(length: end)
            }
            return bytes.count >= maxLength ? .maxedOut(maxLength: maxLength) : .needMore(scanned: limit)
        }
    }

    /// The bytes still missing before this read could complete, at least 1, for a read that did not
    /// match `received` bytes: how many bytes to ask the socket for at most.
    func bytesWanted(received: Int) -> Int {
        switch self {
        case .available(let maxLength): return max(1, maxLength)
        case .exactly(let length): return max(1, length - received)
        case .upTo(_, let maxLength): return max(1, maxLength - received)
        }
    }

    /// The index just past the first `delimiter` that lies wholly within `bytes[from..<upTo]`, or nil.
    static func end(of delimiter: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int, upTo: Int) -> Int? {
        guard let first = delimiter.first, upTo - from >= delimiter.count else { return nil }
        let lastStart = upTo - delimiter.count
        var index = from
        while index <= lastStart {
            if bytes[index] == first {
                var offset = 1
                while offset < delimiter.count && bytes[index + offset] == delimiter[offset] { offset += 1 }
                if offset == delimiter.count { return index + delimiter.count }
            }
            index += 1
        }
        return nil
    }
}

/// Bytes a ``TCPConnection`` took from its socket that no read has returned yet, oldest first. Usually
/// empty: bytes land here only when a read returns less than a socket read brought (the rest of a
/// chunk after a delimiter) or when a read was cancelled after asking the socket for bytes.
struct AsyncReceivedBytes {
    private var storage: [UInt8] = []
    private var start = 0

    /// Capacity kept after the bytes are all taken; larger storage is released.
    static let retainedCapacity = 64 * 1024

    var count: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }

    mutating func append(_ data: Data) {
        if start > 0 && start >= storage.count / 2 {
            storage.removeFirst(start)
            start = 0
        }
        storage.append(contentsOf: data)
    }

    /// Removes and returns the first `length` bytes (at most ``count``).
    mutating func take(_ length: Int) -> Data {
        let end = start + min(length, count)
        let data = Data(storage[start..<end])
        start = end
        if start == storage.count { removeAll() }
        return data
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: storage.capacity <= AsyncReceivedBytes.retainedCapacity)
        start = 0
    }

    func match(_ kind: AsyncReadKind, scanned: Int) -> AsyncReadMatch {
        storage.withUnsafeBytes { kind.match(UnsafeRawBufferPointer(rebasing: $0[start...]), scanned: scanned) }
    }
}
