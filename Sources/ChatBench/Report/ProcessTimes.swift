import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU time used by a process: this one (`CLOCK_PROCESS_CPUTIME_ID`) or another, read from Linux's
/// `/proc/PID/stat`.
enum ProcessTimes {
    /// User plus system CPU seconds this process has used so far. clock_gettime(2).
    static func ownCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// User plus system CPU seconds process `pid` has used so far (fields 14 and 15 of
    /// `/proc/PID/stat`, in clock ticks), or nil when there is no such process or not Linux.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return cpuSeconds(inStat: text, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The user + system seconds in the text of a `/proc/PID/stat` file. The command name (field 2)
    /// is in parentheses and may hold spaces, so fields are counted from the last `)`.
    static func cpuSeconds(inStat text: String, ticksPerSecond: Double) -> Double? {
        guard let close = text.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }
}
