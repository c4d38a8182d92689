import Foundation
import SocketFraming

/// The UTF-8 bytes of `text`.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Frames of `reader`, until it needs more bytes.
func drain<D: FrameDecoder>(_ reader: inout FrameReader<D>) throws(FramingError) -> [D.Frame] {
    var frames: [D.Frame] = []
    while let frame = try reader.nextFrame() { frames.append(frame) }
    return frames
}
