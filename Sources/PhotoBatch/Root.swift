package import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// What both executables share as `photoprep`'s root command: its texts and how it exits.
package enum Root {
    package static let version = "0.2.0"

    package static func configuration(subcommands: [any ParsableCommand.Type]) -> CommandConfiguration {
        CommandConfiguration(
            commandName: "photoprep",
            abstract: "Turn photos into upload-ready JPEGs: decode, orient, resize, encode under a byte budget.",
            discussion: """
                Presets: profile (long edge 1024 px, < 500 KiB), group (2048 px, < 500 KiB), photo (2048 px, < 5 MiB).

                Examples:
                  photoprep prepare ~/Pictures/export --preset group --out ready/
                  photoprep prepare IMG_0001.jpg --max-edge 1600 --max-bytes 800KB --out ready/
                  photoprep probe IMG_0001.jpg
                  photoprep bench TestImages/photos --preset group

                The services (group chats, profile pictures) on an SQLite file and a local store:
                  photoprep user add u1 --name Ana   (and u2, u3)
                  photoprep group create --as u1 --name Hiking --participant u2 --participant u3 --photo summit.jpg
                  photoprep profile set-photo --as u1 me.jpg
                  photoprep sync
                """,
            version: version,
            subcommands: subcommands)
    }

    /// Parses and runs `command`, with usage errors exiting 2 (argument parser's own default is 64).
    package static func main(_ command: any ParsableCommand.Type, arguments: [String]? = nil) async {
        await run(command) {
            var parsed = try command.parseAsRoot(arguments)
            do {
                if var asyncCommand = parsed as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try parsed.run()
                }
            } catch let error as ValidationError {
                // Thrown by the command's own checks: its usage, not the root's.
                throw UsageFailure(message: "\(error)", usage: command.usageString(for: type(of: parsed)))
            }
        }
    }

    /// Runs `body`, exiting on its error as `command`'s parse or run would: usage errors 2, the rest as argument parser
    /// exits (`ExitCode`'s own, 1 with a message for any other error).
    package static func run(_ command: any ParsableCommand.Type, _ body: @Sendable () async throws -> Void) async {
        do {
            try await body()
        } catch let failure as UsageFailure {
            // Found while running (not parsing): the command line's usage line would be the root's, not the command's.
            StandardStream.error.write("Error: \(failure.message)\n" + (failure.usage.map { "Usage: \($0)\n" } ?? ""))
            exit(2)
        } catch {
            let code = command.exitCode(for: error)
            if code == .validationFailure {
                StandardStream.error.write(command.fullMessage(for: error) + "\n")
                exit(2)
            }
            command.exit(withError: error)
        }
    }
}
