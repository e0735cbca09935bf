import ArgumentParser
import PhotoBatch

/// `photoprep`: every command in one executable. Its start-up is kept to what `prepare` needs — the Swift
/// runtime linked statically in release builds (Package.swift), libheif loaded only for a HEIF file, every
/// command named in its configuration (argument parser otherwise derives names with `String(describing:)`,
/// whose protocol-conformance scans over a binary this size cost more than decoding a small photo).
@main
struct Photoprep: AsyncParsableCommand {
    static let configuration = Root.configuration(subcommands: [
        Prepare.self, Probe.self, Upload.self, Presign.self, Bench.self,
        GroupCommand.self, ProfileCommand.self, UserCommand.self, SyncCommand.self, Serve.self,
    ])

    static func main() async { await Root.main(Self.self) }
}
