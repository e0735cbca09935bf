import ArgumentParser
import Foundation
import PhotoPrep

struct Prepare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prepare photos (files or folders, recursively) as upload-ready JPEGs under --out.",
        discussion: """
            Files are recognised by content, not by extension: JPEG and PNG are prepared, anything \
            else is reported as skipped. Outputs mirror the input folders under --out with a .jpg \
            extension and are written atomically. Inputs are never modified.
            Exit status: 0 all prepared, 1 some files failed or were skipped, 2 usage error.
            """)

    @Argument(help: "Photo files or folders.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: "Output folder (created if missing).")
    var out: String

    @OptionGroup var pipeline: PipelineOptions

    func run() throws {
        let files: [InputFile]
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            files = try InputFiles.expand(inputs, excluding: out)
        } catch {
            throw ValidationError("\(error)")
        }
        let preparer = PhotoPipeline(options: pipeline.options)
        var failed = 0
        var bytesIn = 0, bytesOut = 0
        for file in files {
            do {
                let photo = try preparer.prepare(contentsOf: file.path)
                let target = (out as NSString).appendingPathComponent(file.relativeOutput)
                try AtomicFile.write(photo.jpeg, to: target)
                let r = photo.report
                bytesIn += r.sourceBytes
                bytesOut += r.outputBytes
                let quality = r.quality.map { "Q\($0)" } ?? r.action.rawValue
                let warnings = r.warnings.isEmpty ? "" : "  warning: " + r.warnings.joined(separator: "; ")
                print("\(file.path) → \(target)  \(r.sourceWidth)×\(r.sourceHeight) \(kib(r.sourceBytes)) → \(r.outputWidth)×\(r.outputHeight) \(kib(r.outputBytes))  \(quality), \(r.encodes) encode(s), \(ms(r.timings.total))\(warnings)")
            } catch {
                failed += 1
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            }
        }
        print("\(files.count - failed) prepared, \(failed) failed; \(kib(bytesIn)) → \(kib(bytesOut))")
        if failed > 0 { throw ExitCode(1) }
    }
}

func kib(_ bytes: Int) -> String { String(format: "%.1f KiB", Double(bytes) / 1024) }
func ms(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }

/// Writes a file so that no reader ever sees it half-written: a temporary file in the same folder,
/// flushed to disk, then renamed over the target.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = (folder as NSString).appendingPathComponent(".\((path as NSString).lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
            throw CommandFailure(message: "\(temporary): cannot create the temporary file")
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary, path) == 0 else {
                throw CommandFailure(message: "\(path): cannot rename into place: \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
