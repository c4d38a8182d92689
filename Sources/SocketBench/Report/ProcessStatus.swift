import Foundation

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
}
