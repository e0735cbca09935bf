import ArgumentParser
import PhotoBatch

/// `photoprep`: every command in one executable. Its start-up is kept to what `prepare` needs — the Swift
/// runtime linked statically in release builds (Package.swift), libheif loaded only for a HEIF file, every
/// command named in its configuration (argument parser otherwise derives names with `String(describing:)`,
/// whose protocol-conformance scans over a binary this size cost more than decoding a small photo).
@main
struct Photoprep: AsyncParsableCommand {
    static let configuration = Root.configuration(subcommands: [
        Prepare.self, Probe.self, Score.self, Upload.self, Presign.self, Bench.self,
        GroupCommand.self, ProfileCommand.self, UserCommand.self, SyncCommand.self, EventsCommand.self,
        QuarantineCommand.self, Serve.self,
    ])

    /// `--version`, and `prepare` in the forms people type (`PrepareCommandLine`), are read without argument parser:
    /// its reflection over a command's options cost more than preparing a small photo. Everything else, and
    /// anything `PrepareCommandLine` declines, is argument parser's.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--version"] {
            print(Root.version)
        } else if let settings = PrepareCommandLine.read(arguments) {
            await Root.run(Self.self) { try await settings.run(upload: nil) }
        } else if let name = arguments.first, let command = configuration.subcommands.first(where: { $0.configuration.commandName == name }) {
            // A command named first is parsed under a root that has it alone: argument parser builds (and reflects over)
            // the whole tree of commands it is given, every option of every command, before it parses one.
            await Root.main(only(command))
        } else {
            await Root.main(Self.self)
        }
    }

    /// `photoprep` with one command: the same name, texts and exits, for what argument parser reads.
    struct Only<Command: ParsableCommand>: AsyncParsableCommand {
        static var configuration: CommandConfiguration { Root.configuration(subcommands: [Command.self]) }
    }

    static func only<Command: ParsableCommand>(_ command: Command.Type) -> any ParsableCommand.Type { Only<Command>.self }
}
