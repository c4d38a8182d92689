// framing-bench: prints the decode throughput of every SocketFraming codec for 64-byte and 64 KiB
// frames beside a plain memcpy of the same bytes. Build and run in release mode:
//
//     swift build -c release --product framing-bench && .build/release/framing-bench [total MiB, default 64]
//
// `framing-bench permessage-deflate [messages, default 20000]` compares permessage-deflate's settings on
// chat-like JSON messages instead (bytes sent, time per message).
import FramingBenchmarks
import Foundation

if CommandLine.arguments.dropFirst().first == "permessage-deflate" {
    let count = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? 20_000
    let messages = PerMessageDeflateBenchmarks.chatMessages(count: count)
    print("framing-bench permessage-deflate: \(count) chat-like JSON messages, best of 3")
    print("| setting | bytes sent / plain | compress ns/message | inflate ns/message |")
    print("| --- | ---: | ---: | ---: |")
    for result in try PerMessageDeflateBenchmarks.run(messages: messages) {
        let ratio = Double(result.compressedBytes) / Double(result.plainBytes) * 100
        print(
            "| \(result.setting) | \(result.compressedBytes) / \(result.plainBytes) (\(String(format: "%.0f", ratio)) %) | "
                + "\(String(format: "%.0f", result.compressNanoseconds)) | \(String(format: "%.0f", result.decompressNanoseconds)) |")
    }
    exit(0)
}

let totalMiB = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 64
print("framing-bench: about \(totalMiB) MiB of payload a pass, fed in \(FramingBenchmarks.readBytes / 1024) KiB reads, best of 3")
print("| codec | payload per frame | MB/s | frames/s |")
print("| --- | ---: | ---: | ---: |")
for payloadBytes in [64, 64 * 1024] {
    for result in try FramingBenchmarks.run(payloadBytes: payloadBytes, totalBytes: totalMiB << 20) {
        let size = result.payloadBytes >= 1024 ? "\(result.payloadBytes / 1024) KiB" : "\(result.payloadBytes) B"
        let exactSize = result.payloadBytes % 1024 == 0 || result.payloadBytes < 1024 ? size : "\(result.payloadBytes) B"
        print(
            "| \(result.codec) | \(exactSize) | \(String(format: "%.0f", result.megabytesPerSecond)) | "
                + "\(String(format: "%.0f", result.framesPerSecond)) |")
    }
}
