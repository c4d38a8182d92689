import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// chat-bench's logic (the executable only forwards its arguments here): a load generator for the chat
/// server, `im-server`, over version 2 of the chat protocol (docs/PROTOCOL.md): how many messages per
/// second it stores and acknowledges (``ThroughputOptions``), how long a message takes from sender to
/// receiver at a steady rate (``LatencyOptions``), and how many bytes its store file takes per message
/// (``StoreSize``). Every run checks that each message was acknowledged once and delivered once, in
/// order. docs/BENCHMARKS.md has the commands and the figures; `scripts/bench-chat.sh` runs them all.
public enum ChatBench {
    /// The usage text printed for `--help` and for bad arguments.
    public static let usage = """
        usage: chat-bench throughput --port P [--senders S] [--messages N] [--window W] [options]
               chat-bench latency --port P [--rate R] [--seconds T] [options]
               chat-bench store-size FILE
        (chat-bench throughput --help, chat-bench latency --help)
        """

    /// Runs chat-bench with `arguments` (without the program name) and returns the process exit status:
    /// 0 after a clean run, 1 when a run was not clean (a message lost, duplicated, refused, or a
    /// connection failed) or the store could not be measured, 64 for bad arguments.
    public static func main(arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let rest = Array(arguments.dropFirst())
        switch arguments.first {
        case "throughput":
            if rest.contains("--help") || rest.contains("-h") { return help(ThroughputOptions.usage) }
            do {
                let result = runThroughput(try ThroughputOptions.parse(rest))
                return report(result.summary, result.fields, clean: result.isClean)
            } catch {
                return usageError("\(error)\n\(ThroughputOptions.usage)")
            }
        case "latency":
            if rest.contains("--help") || rest.contains("-h") { return help(LatencyOptions.usage) }
            do {
                let result = runLatency(try LatencyOptions.parse(rest))
                return report(result.summary, result.fields, clean: result.isClean)
            } catch {
                return usageError("\(error)\n\(LatencyOptions.usage)")
            }
        case "store-size":
            guard rest.count == 1, let path = rest.first, !path.hasPrefix("-") else {
                return usageError("store-size needs one argument, the store file\n" + usage)
            }
            do {
                let size = try StoreSize.measure(path: path)
                return report(size.summary, size.fields, clean: true)
            } catch {
                Output.complain("\(error)")
                return 1
            }
        case "--help", "-h":
            return help(usage)
        case nil:
            return usageError("a command is needed\n" + usage)
        default:
            return usageError("unknown command \(arguments[0])\n" + usage)
        }
    }

    /// Runs one throughput load (``ThroughputOptions``), blocking the calling thread until it ends.
    public static func runThroughput(_ options: ThroughputOptions) -> ThroughputResult {
        ThroughputRun.run(options)
    }

    /// Runs one latency load (``LatencyOptions``), blocking the calling thread until it ends.
    public static func runLatency(_ options: LatencyOptions) -> LatencyResult {
        LatencyRun.run(options)
    }

    private static func help(_ text: String) -> Int32 {
        Output.say(text)
        return 0
    }

    private static func usageError(_ text: String) -> Int32 {
        Output.complain(text)
        return 64
    }

    /// The summary on standard error, the RESULT line on standard output.
    private static func report(_ summary: String, _ fields: [(key: String, value: String)], clean: Bool) -> Int32 {
        FileHandle.standardError.write(Data((summary + "\n").utf8))
        Output.say(Format.resultLine(fields))
        return clean ? 0 : 1
    }
}
