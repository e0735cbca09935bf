import ArgumentParser

@main
struct Photoprep: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn photos into upload-ready JPEGs.",
        subcommands: [Prepare.self])
}
