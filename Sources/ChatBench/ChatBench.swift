import AsyncSocket
import Foundation
import SocketBench
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The chat load generator of `socket-bench` (`socket-bench client chat …`, `socket-bench store-size
/// FILE`; the executable only forwards its arguments here through ``SocketBench/main(arguments:chat:)``):
/// load for the chat server, `im-server`, and checks of everything it delivers (docs/BENCHMARKS.md).
///
/// Modes (`--mode`, default `load`):
/// - `load` (``LoadOptions``): N users log in, then send direct messages and broadcasts at given rates;
///   logins/s, delivery latency p50/p99/p99.9, every delivery verified exactly once and in order.
/// - `crowd`: `load` with the crowd defaults (2,000 users logging in at once while two probe users
///   exchange direct messages; the probes' delays reported apart).
/// - `throughput` (``ThroughputOptions``): how many messages per second the server stores and acknowledges.
/// - `latency` (``LatencyOptions``): one sender, one receiver at a steady rate; send → delivery and → stored.
/// `store-size` (``StoreSize``): how many bytes the store file takes per message.
/// `scripts/bench-chat.sh` runs throughput, latency and store-size on each store configuration.
public enum ChatBench {
    /// The usage text of `socket-bench client chat --help`.
    public static let usage = """
        usage: socket-bench client chat [--mode load|crowd|throughput|latency] [--json] [options]
        \(LoadOptions.usage)

        \(ThroughputOptions.usage)

        \(LatencyOptions.usage)

        Every mode: a summary on standard error and one RESULT line (or with --json one JSON object) on standard
        output; exit status 0 after a clean run, 1 otherwise, 64 for bad arguments.
        """

    /// The usage text of `socket-bench store-size --help`.
    public static let storeSizeUsage = """
        usage: socket-bench store-size FILE
        Bytes of the chat store FILE and FILE-wal as found, then after PRAGMA wal_checkpoint(TRUNCATE), per 1,000 messages.
        """

    /// Runs `socket-bench client chat` with `arguments` (those after `chat`) and returns the process exit
    /// status: 0 after a clean run, 1 when a run was not clean (a delivery missing, duplicated or out of
    /// order, a server error, a failed connection or login, a missed heartbeat), 64 for bad arguments.
    public static func main(arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        if arguments.contains("--help") || arguments.contains("-h") { return help(usage) }
        let (mode, json, rest): (String, Bool, [String])
        do {
            (mode, json, rest) = try splitCommon(arguments)
        } catch {
            return usageError("\(error)\n(socket-bench client chat --help)")
        }
        switch mode {
        case "load", "crowd":
            let options: LoadOptions
            do {
                options = try LoadOptions.parse(rest, defaults: mode == "crowd" ? .crowd : LoadOptions())
            } catch {
                return usageError("\(error)\n\(LoadOptions.usage)")
            }
            ResourceLimits.raiseOpenFileLimit()
            if let limit = ResourceLimits.openFileLimit(), UInt64(options.connections) + 64 > limit {
                Output.complain(
                    "warning: \(options.connections) connections need more open files than the limit, \(limit); "
                        + "run several clients of fewer users each")
            }
            let result = runLoad(options)
            return report(result.summary, result.fields, json: json, clean: result.isClean)
        case "throughput":
            do {
                let result = runThroughput(try ThroughputOptions.parse(rest))
                return report(result.summary, result.fields.map { ($0.key, .text($0.value)) }, json: json, clean: result.isClean)
            } catch {
                return usageError("\(error)\n\(ThroughputOptions.usage)")
            }
        case "latency":
            do {
                let result = runLatency(try LatencyOptions.parse(rest))
                return report(result.summary, result.fields.map { ($0.key, .text($0.value)) }, json: json, clean: result.isClean)
            } catch {
                return usageError("\(error)\n\(LatencyOptions.usage)")
            }
        default:
            return usageError("--mode: load, crowd, throughput or latency, not \(mode)")
        }
    }

    /// Runs `socket-bench store-size` with `arguments` (those after `store-size`): 0 after measuring,
    /// 1 when the file cannot be measured, 64 for bad arguments.
    public static func storeSize(arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") { return help(storeSizeUsage) }
        guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
            return usageError("store-size needs one argument, the store file\n" + storeSizeUsage)
        }
        do {
            let size = try StoreSize.measure(path: path)
            return report(size.summary, size.fields.map { ($0.key, .text($0.value)) }, json: false, clean: true)
        } catch {
            Output.complain("\(error)")
            return 1
        }
    }

    /// Takes `--mode M` (default `load`) and `--json` out of `arguments`.
    /// - Throws: ``ArgumentError`` when `--mode` has no value.
    static func splitCommon(_ arguments: [String]) throws(ArgumentError) -> (mode: String, json: Bool, rest: [String]) {
        var mode = "load", json = false, rest: [String] = []
        var scanner = ArgumentScanner(arguments)
        while let argument = scanner.next() {
            switch argument {
            case "--mode": mode = try scanner.value(for: argument)
            case "--json": json = true
            default:
                rest.append(argument)
                // A flag's value is passed on as it is, even when it reads like `--json`.
                if argument.hasPrefix("--"), !LoadOptions.flagsWithoutValue.contains(argument), let value = scanner.next() {
                    rest.append(value)
                }
            }
        }
        return (mode, json, rest)
    }

    /// Runs one load or crowd run (``LoadOptions``), blocking the calling thread until it ends.
    public static func runLoad(_ options: LoadOptions) -> LoadResult { LoadRun.run(options) }

    /// Runs one throughput load (``ThroughputOptions``), blocking the calling thread until it ends.
    public static func runThroughput(_ options: ThroughputOptions) -> ThroughputResult { ThroughputRun.run(options) }

    /// Runs one latency load (``LatencyOptions``), blocking the calling thread until it ends.
    public static func runLatency(_ options: LatencyOptions) -> LatencyResult { LatencyRun.run(options) }

    private static func help(_ text: String) -> Int32 {
        Output.say(text)
        return 0
    }

    private static func usageError(_ text: String) -> Int32 {
        Output.complain(text)
        return 64
    }

    /// The summary on standard error; the RESULT line (or the JSON object) on standard output.
    private static func report(_ summary: String, _ fields: [(key: String, value: ResultValue)], json: Bool, clean: Bool) -> Int32 {
        FileHandle.standardError.write(Data((summary + "\n").utf8))
        Output.say(json ? Format.jsonObject(fields) : Format.resultLine(fields.map { ($0.key, $0.value.plain) }))
        return clean ? 0 : 1
    }
}
