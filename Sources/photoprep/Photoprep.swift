import ArgumentParser
import Foundation

@main
struct Photoprep: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
        version: "0.2.0",
        subcommands: [
            Prepare.self, Probe.self, Upload.self, Presign.self, Bench.self,
            GroupCommand.self, ProfileCommand.self, UserCommand.self, SyncCommand.self, Serve.self,
        ])

    /// Runs the command, with usage errors exiting 2 (argument parser's own default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
