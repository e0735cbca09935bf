package import ArgumentParser
import PhotoPrep

/// `photoprep score`: SSIMULACRA2 of photos against a reference, as `prepare` measures its outputs.
package struct Score: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score photos against a reference with SSIMULACRA2 (90: indistinguishable in a flicker test, 85: in a flip test, 80: side by side, 70: artefacts hard to notice).",
        discussion: """
            Each photo is decoded whole and upright (EXIF orientation), transparency flattened onto white, and compared \
            with the reference at the same size. Exit status: 0 all scored, 1 some could not be.

            Example:
              photoprep score original-resized.png out/photo.jpg
            """)

    @Argument(help: "The reference photo.")
    var reference: String

    @Argument(help: "Photos to score against it (the same size).")
    var photos: [String]

    @Flag(help: "One JSON object per photo.")
    var json = false

    package func run() throws {
        var failed = false
        for photo in photos {
            do {
                let score = try SSIMULACRA2.score(reference: reference, distorted: photo)
                if json {
                    printJSONLine(ScoreLine(file: photo, reference: reference, score: score))
                } else {
                    print("\(cFormat("%.2f", score))  \(photo)")
                }
            } catch {
                failed = true
                StandardStream.error.write("error: \(error)\n")
            }
        }
        if failed { throw ExitCode(1) }
    }

    struct ScoreLine: Encodable {
        var file: String
        var reference: String
        var score: Double
    }
}
