import ArgumentParser

@main
struct Photoprep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photoprep",
        abstract: "Turn photos into upload-ready JPEGs: decode, orient, resize, encode under a byte budget.",
        discussion: """
            Examples:
              photoprep prepare ~/Pictures/export --preset group --out ready/
              photoprep prepare IMG_0001.jpg --max-edge 1600 --max-bytes 800KB --out ready/
              photoprep bench TestImages/photos --preset group
            """,
        version: "0.1.0",
        subcommands: [Prepare.self, Bench.self])
}
