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

package struct Probe: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe photos: format, size, orientation, colour profile, metadata, and what prepare would do.")

    @Argument(help: "Photo files.")
    var files: [String]

    @OptionGroup var pipeline: PipelineOptions

    @Flag(help: "One JSON object per file.")
    var json = false

    package func run() throws {
        let preparer = PhotoPipeline(options: pipeline.options)
        var failed = false
        for file in files {
            do {
                let p = try preparer.probe(contentsOf: file)
                if json {
                    printJSONLine(ProbeLine(file: file, probe: p))
                    continue
                }
                let metadata = (p.hasEXIF ? ["EXIF" + (p.hasGPS ? " with GPS" : " (no GPS)")] : []) + p.otherMetadata
                    + (p.trailingBytes > 0 ? ["\(p.trailingBytes) bytes after the end of the image"] : [])
                print("""
                    \(file)
                      format       \(p.format.rawValue), \(p.encoding), \(p.colorModel)
                      size         \(p.width) × \(p.height) (\(cFormat("%.1f", Double(p.width) * Double(p.height) / 1e6)) MP), \(p.bytes) bytes
                      orientation  \(p.orientation)\(p.orientation == 1 ? " (upright)" : "")
                      colour       \(p.colorProfile.map { "ICC profile, \($0)" } ?? "no ICC profile (sRGB assumed)")
                      metadata     \(metadata.isEmpty ? "none" : metadata.joined(separator: ", "))\(p.animated ? "\n  animation    yes (first frame used)" : "")
                      prepare      \(p.plan.action.hasPrefix("refuse") ? p.plan.action : "\(p.plan.action) → \(p.plan.outputWidth) × \(p.plan.outputHeight)\(p.plan.decodeScale > 1 ? ", decoding at 1/\(p.plan.decodeScale)" : "")")
                    """)
                for warning in p.warnings { print("  warning      \(warning)") }
            } catch {
                failed = true
                StandardStream.error.write("error: \(error)\n")
            }
        }
        if failed { throw ExitCode(1) }
    }

    struct ProbeLine: Encodable {
        var file: String
        var probe: PhotoProbe
    }
}
