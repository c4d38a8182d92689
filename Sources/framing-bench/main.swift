// framing-bench: prints the decode throughput of every SocketFraming codec for 64-byte and 64 KiB
// frames beside a plain memcpy of the same bytes. Build and run in release mode:
//
//     swift build -c release --product framing-bench && .build/release/framing-bench [total MiB, default 64]
import FramingBenchmarks
import Foundation

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
