import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `socket-bench client pingpong|pipeline|bulk|idle [options]` (``ClientOptions/usage``) and `socket-bench
/// client websocket …` (``ClientOptions/webSocketUsage``): runs one
/// ``BenchClient`` load, prints the summary on standard error and one RESULT line on standard output,
/// appends a CSV row with `--csv`, and returns 0 for a clean run, 1 otherwise, 64 for bad arguments.
enum ClientCommand {
    static func run(arguments: [String]) -> Int32 {
        let isWebSocket = arguments.first == "websocket"
        let usage = isWebSocket ? ClientOptions.webSocketUsage : ClientOptions.usage
        let options: ClientOptions
        switch ParsedArguments.parse(
            arguments, usage: usage, { isWebSocket ? try ClientOptions.parseWebSocket(Array($0.dropFirst())) : try ClientOptions.parse($0) }
        ) {
        case .run(let parsed): options = parsed
        case .exit(let status): return status
        }
        if let path = options.csvPath, !ResultWriter.canAppend(to: path) {
            Output.complain("cannot write the CSV file \(path)")
            return 64
        }
        if let pid = options.serverPID, ProcessStatus.residentKilobytes(of: pid) == nil {
            Output.complain("warning: no process \(pid) to read the server's memory from (--server-pid)")
        }
        signal(SIGPIPE, SIG_IGN)
        ResourceLimits.raiseOpenFileLimit()
        warnAboutOpenFileLimit(connections: options.connections)

        let result = BenchClient.run(options) as BenchResult
        FileHandle.standardError.write(Data((ResultWriter.summary(result) + "\n").utf8))
        Output.say(ResultWriter.resultLine(result))
        if let path = options.csvPath {
            do {
                try ResultWriter.appendCSV(result, to: path)
            } catch {
                Output.complain("cannot append to \(path): \(error.localizedDescription)")
                return 1
            }
        }
        return result.isClean ? 0 : 1
    }

    /// Says so on standard error when `connections` (plus a few descriptors of the process's own) exceed
    /// the open-file limit: the connects past it will fail.
    private static func warnAboutOpenFileLimit(connections: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, UInt64(connections) + 64 > UInt64(limit.rlim_cur) else { return }
        Output.complain(
            "warning: \(connections) connections need more open files than the limit, \(limit.rlim_cur); "
                + "run several clients of fewer connections each")
    }
}
