import ArgumentParser
import PhotoBatch

/// Every `photoprep` command. Users run `photoprep`, which hands this binary whatever it does not do
/// itself (`serve`, `upload`, the services, `prepare --upload`, the root help).
@main
struct PhotoprepFull: AsyncParsableCommand {
    static let configuration = Root.configuration(subcommands: [
        Prepare.self, Probe.self, Upload.self, Presign.self, Bench.self,
        GroupCommand.self, ProfileCommand.self, UserCommand.self, SyncCommand.self, Serve.self,
    ])

    static func main() async { await Root.main(Self.self) }
}
