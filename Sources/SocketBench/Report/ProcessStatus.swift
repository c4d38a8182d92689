import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Figures about another process, read from Linux's `/proc`.
public enum ProcessStatus {
    /// The resident set size of process `pid` in KiB (the `VmRSS:` line of `/proc/PID/status`), or nil
    /// when there is no such process or no such line (not Linux, or a kernel thread).
    public static func residentKilobytes(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return residentKilobytes(inStatus: text)
    }

    /// The KiB of the `VmRSS:` line in the text of a `/proc/PID/status` file.
    public static func residentKilobytes(inStatus text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count >= 2 { return Int(fields[1]) }
        }
        return nil
    }

    /// The CPU time process `pid` has used so far, user plus system, in seconds (fields 14 and 15 of
    /// `/proc/PID/stat`, in clock ticks of `sysconf(_SC_CLK_TCK)`), or nil when unreadable.
    public static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return cpuTicks(inStat: text).map { Double($0) / Double(sysconf(Int32(_SC_CLK_TCK))) }
    }

    /// utime + stime, in clock ticks, of the text of a `/proc/PID/stat` file: the fields after the
    /// command name (which may hold spaces and parentheses, so the last `)` ends it), 12th and 13th.
    public static func cpuTicks(inStat text: String) -> Int? {
        guard let end = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
