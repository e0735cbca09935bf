import Foundation

/// How many cores this process may run on: the CPUs of its affinity mask (`taskset`, a container's
/// cpuset), which `ProcessInfo.activeProcessorCount` does not look at on Linux — it counts the machine's.
/// Thread pools sized by it do not put more busy threads on a core than it has room for.
public enum UsableCores {
    public static let count: Int = {
        let machine = ProcessInfo.processInfo.activeProcessorCount
        guard let allowed = allowedInProcStatus(), allowed > 0 else { return machine }
        return min(allowed, machine)
    }()

    /// The bits set in `/proc/self/status`'s `Cpus_allowed` mask (hex words separated by commas): Glibc's
    /// `sched_getaffinity` is behind `_GNU_SOURCE`, which Swift's Glibc module does not define.
    static func allowedInProcStatus() -> Int? {
        (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)).flatMap(allowed(inStatus:))
    }

    /// The bits set in the `Cpus_allowed` line of a `/proc/{pid}/status` text (nil without one, or a malformed one).
    static func allowed(inStatus status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var cores = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && !character.isWhitespace {
            guard let digit = character.hexDigitValue else { return nil }
            cores += digit.nonzeroBitCount
        }
        return cores
    }
}
