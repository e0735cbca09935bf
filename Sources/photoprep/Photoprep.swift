import ArgumentParser
import PhotoBatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `photoprep`: prepares, probes and benchmarks photos itself, linking only the pipeline and the
/// batch (no network stack, no full Foundation), because a whole-process run of `prepare` on one photo
/// is dominated by what starts before the first decoded row. Every other command — and `prepare
/// --upload`, and the help that lists every command — is handed to `photoprep-full` beside it,
/// replacing this process (same process id, arguments and streams).
@main
struct Photoprep: AsyncParsableCommand {
    static let configuration = Root.configuration(subcommands: [Prepare.self, Probe.self, Bench.self])

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if Forwarding.needsFullCommandSet(arguments) { Forwarding.replaceProcess(arguments) }
        await Root.main(Self.self, arguments: arguments)
    }
}

struct Prepare: AsyncParsableCommand {
    static let configuration = PrepareArguments.configuration

    @OptionGroup var arguments: PrepareArguments

    func run() async throws { try await arguments.run(upload: nil) }
}

enum Forwarding {
    static let fullCommandSet = "photoprep-full"

    /// Whether `photoprep-full` runs these arguments: anything but `prepare` (without `--upload`),
    /// `probe`, `bench` and `--version`. Help goes there too, so it lists every command and option.
    static func needsFullCommandSet(_ arguments: [String]) -> Bool {
        guard let command = arguments.first else { return true }
        if command == "--version" { return false }
        guard ["prepare", "probe", "bench"].contains(command) else { return true }
        let rest = arguments.dropFirst().prefix { $0 != "--" }
        return rest.contains { $0 == "-h" || $0 == "--help" || (command == "prepare" && $0.hasPrefix("--upload")) }
    }

    /// `execv`s `photoprep-full` from this binary's folder; says why and exits 1 when it cannot.
    static func replaceProcess(_ arguments: [String]) -> Never {
        let path = folderOfThisBinary() + "/" + fullCommandSet
        let argv = ([CommandLine.arguments[0]] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        StandardStream.error.write("photoprep: this command is run by \(path), which cannot be started (\(reason)); `swift build` builds it beside photoprep\n")
        exit(1)
    }

    static func folderOfThisBinary() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = n > 0
            ? String(nulTerminated: buffer)  // zero-filled, and readlink leaves the last byte alone
            : CommandLine.arguments[0]
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
