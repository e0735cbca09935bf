package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import PhotoPrep
import PhotoFiles
import Synchronization

/// `photoprep prepare`'s arguments and its run; the command adds `--upload` and its options.
package struct PrepareArguments: ParsableArguments {
    package static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Prepare photos (files or folders, recursively) as upload-ready JPEGs under --out.",
        discussion: """
            Files are recognised by content, not by extension: JPEG, PNG, HEIC/HEIF, AVIF and WebP \
            are prepared, anything else is reported as skipped. Outputs mirror the input folders under --out with a .jpg \
            extension and are written atomically; inputs are never modified.

            Re-running the same command skips what is already prepared with the same settings \
            (a manifest in --out keyed by content hash and settings), so an interrupted run \
            (Ctrl-C, kill, power loss) finishes on the next run. Ctrl-C lets the photos in hand \
            finish and prints what remains; a second Ctrl-C stops at once.

            Exit status: 0 all prepared, 1 some files failed, 2 usage error, 130 interrupted.

            Examples:
              photoprep prepare ~/Pictures/2024 --preset photo --out upload/
              photoprep prepare a.jpg b.png --max-edge 1600 --max-bytes 800KB --out out/ --report out/report.csv
              photoprep prepare ~/Pictures --out out/ --json | jq .event
              photoprep prepare /shared/photos --out out/ --upload s3://photos/2026 --shard 1/3   (machine 1 of 3)
            """)

    package init() {}
    private static let defaults = PrepareSettings(inputs: [], out: "")

    @Argument(help: "Photo files or folders (recursive).")
    var inputs: [String]

    @Option(name: .shortAndLong, help: "Output folder (created if missing).")
    var out: String

    @OptionGroup var pipeline: PipelineOptions

    @Option(name: .shortAndLong, help: "Photos prepared at once (default: the number of cores).")
    var jobs: Int?

    @Option(help: "Write one row per input to this file: CSV if it ends in .csv, JSON otherwise.")
    var report: String?

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = defaults.quiet

    @Flag(help: "Print one JSON object per file event, then a summary object, on standard output.")
    var json = defaults.json

    @Flag(help: "Prepare everything again, ignoring what the manifest says is done.")
    var force = defaults.force

    @Option(help: "Also write thumbnails of each output, long edges of 16 to 16384 px as a comma-separated list (e.g. 512 or 128,256; up to 8), to thumbnails/EDGE/ under --out at the same relative path — what `photoprep serve` makes on arrival (album photos 512, avatars 128,256).")
    var thumbnails: ThumbnailEdges?

    @Flag(help: "With --thumbnails, also write each thumbnail as WebP, from the same pixels and for the same quality target, to thumbnails/webp/EDGE/ at the same relative path plus .webp — what `photoprep serve` makes on arrival.")
    var webpThumbnails = defaults.webpThumbnails

    @Flag(help: "With --thumbnails, make them squares of those sides (avatars): the largest square of each photo, centred on --focus, else on the area libvips' attention rule picks (edges, skin tones, saturated colours), else the centre; never enlarged.")
    var squareThumbnails = defaults.squareThumbnails

    @Option(help: ArgumentHelp("With --square-thumbnails, the point to centre them on, as Mastodon's focus: x,y each from -1 to 1, 0,0 the centre, -1,1 the top left.", valueName: "x,y"))
    var focus: FocalPoint?

    @Option(help: "Take share I of N (1-based) of the inputs, by a stable hash of their relative path: N processes on N machines with the same inputs and --upload s3://… prepare the batch once between them; photos already uploaded from the same content and settings are skipped.")
    var shard: Shard?

    package func validate() throws { try settings.validate() }

    package var settings: PrepareSettings {
        var settings = PrepareSettings(inputs: inputs, out: out)
        settings.pipeline = pipeline.settings
        settings.jobs = jobs
        settings.report = report
        settings.quiet = quiet
        settings.json = json
        settings.force = force
        settings.shard = shard
        settings.thumbnails = thumbnails?.edges ?? []
        settings.webpThumbnails = webpThumbnails
        settings.squareThumbnails = squareThumbnails
        settings.focus = focus
        return settings
    }
}

/// `photoprep prepare`'s settings as plain values, with their defaults, and its run: what `PrepareArguments` parses
/// and what `PrepareCommandLine` reads.
package struct PrepareSettings: Equatable, Sendable {
    var inputs: [String]
    var out: String
    var pipeline = PipelineSettings()
    /// Photos prepared at once; nil: one for each core this process may use (`UsableCores`), counted only then — Foundation's
    /// count reads the cgroup's files through `URL`, 0.8 M instructions, as much as decoding a small photo's first scans.
    var jobs: Int?
    var report: String?
    var quiet = false
    var json = false
    var force = false
    var shard: Shard?
    /// Long edges of the thumbnails written beside each output (`--thumbnails`), none by default; each goes under
    /// `--out` at `Thumbnail.key(of:edge:)` of its output's relative path, the server's layout.
    var thumbnails: [Int] = []
    /// Each thumbnail also as WebP (`--webp-thumbnails`), at `Thumbnail.webpKey(of:edge:)`.
    var webpThumbnails = false
    /// Square thumbnails (`--square-thumbnails`), centred on `focus` (`--focus`) when given.
    var squareThumbnails = false
    var focus: FocalPoint?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if webpThumbnails && thumbnails.isEmpty { throw ValidationError("--webp-thumbnails needs --thumbnails") }
        if squareThumbnails && thumbnails.isEmpty { throw ValidationError("--square-thumbnails needs --thumbnails") }
        if focus != nil && !squareThumbnails { throw ValidationError("--focus needs --square-thumbnails") }
        if quiet && json { throw ValidationError("--quiet and --json cannot be combined") }
        try pipeline.validate()
    }

    /// Prepares the batch, and uploads each output when `upload` is given.
    package func run(upload: (any BatchUpload)?) async throws {
        let files: [InputFile]
        try OutputFolder.create(out)
        do {
            files = try InputFiles.expand(inputs, excluding: out, skipped: { path, why in
                StandardStream.error.write("skipped: \(path): \(why)\n")
            }).filter { shard?.contains($0.relativeOutput) ?? true }
        } catch {
            throw UsageFailure(message: "\(error)")
        }
        if !thumbnails.isEmpty, let file = files.first(where: { $0.relativeOutput.lowercased().hasPrefix(Thumbnail.folder + "/") }) {
            throw UsageFailure(message: "\(file.path): its output \(Path.join(out, file.relativeOutput)) would be among the thumbnails under \(Path.join(out, Thumbnail.folder))/ (choose another --out)")
        }
        AtomicFile.removeLeftovers(under: out)
        let manifest = Manifest(folder: out)
        var options = pipeline.options
        options.thumbnails = thumbnails
        options.webpThumbnails = webpThumbnails
        options.squareThumbnails = squareThumbnails
        options.focus = focus
        let runner = BatchRunner(
            files: files, outputRoot: out, pipeline: PhotoPipeline(options: options), manifest: manifest,
            reuse: !force, upload: upload)
        let console = Console(mode: Console.mode(json: json, quiet: quiet), total: files.count)
        let interrupts = Interrupts.install("stopping after the photos in hand")
        let outcomes = await runner.run(jobs: jobs ?? UsableCores.count, report: console.report)
        interrupts.cancel()
        let summary = BatchSummary(
            outcomes: outcomes, total: files.count, wallSeconds: seconds(since: console.start),
            interrupted: stopRequested.load(ordering: .relaxed))
        if let report {
            try ReportRow.write(outcomes.map(ReportRow.init), to: report)
        }
        console.finish(summary)
        if summary.remaining > 0 { throw ExitCode(130) }
        if summary.failed > 0 { throw ExitCode(1) }
    }
}

/// The `--out` folder, made (with its parents) and checked writable up front: a failure is the
/// system's plain reason (read-only file system, permission denied), exit status 1; naming a file is
/// a usage error (exit 2).
package enum OutputFolder {
    package static func create(_ path: String) throws {
        if let reason = Path.makeFolders(path) {
            throw CommandFailure(message: "\(path): cannot create the output folder: \(reason.message)")
        }
        guard Path.isFolder(path) else {
            throw UsageFailure(message: "--out \(path): is a file, not a folder")  // a usage error: exit 2
        }
        guard access(path, W_OK) == 0 else {
            throw CommandFailure(message: "\(path): the output folder is not writable: \(String(cString: strerror(errno)))")
        }
    }
}

/// `--thumbnails 128,256`: up to eight long edges of 16 to 16384 px, each once, in the order given.
package struct ThumbnailEdges: ExpressibleByArgument, Equatable, Sendable {
    var edges: [Int]

    package init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { Int(String($0).trimmed) }
        guard !parts.isEmpty, parts.count <= 8 else { return nil }
        var edges: [Int] = []
        for part in parts {
            guard let edge = part, (16...16384).contains(edge), !edges.contains(edge) else { return nil }
            edges.append(edge)
        }
        self.edges = edges
    }
}

/// `I/N`: share I (1…N) of N, chosen by a stable hash of each input's relative path.
package struct Shard: ExpressibleByArgument, Equatable, Sendable {
    var index: Int
    var count: Int

    package init?(argument: String) {
        let parts = argument.split(separator: "/")
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// The first 8 bytes of the SHA-256 of the path, modulo N: the same on every machine and run.
    func contains(_ relativePath: String) -> Bool {
        let digest = Manifest.sha256(Array(relativePath.utf8))
        let value = UInt64(digest.prefix(16), radix: 16)!
        return Int(value % UInt64(count)) == index - 1
    }
}
