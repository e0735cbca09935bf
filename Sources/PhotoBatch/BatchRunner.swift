#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import PhotoFiles
import PhotoPrep
import Synchronization

/// Where `prepare --upload` sends each output. The `photoprep` command implements it over `PhotoUpload`;
/// the batch itself knows no network stack.
package protocol BatchUpload: Sendable {
    /// The destination as given (part of the manifest's settings).
    var destination: String { get }
    /// Whether the destination can say what it holds under a key (S3: HEAD), so that a photo another
    /// machine already uploaded from the same content and settings is not prepared again.
    var knowsObjects: Bool { get }
    func existingObject(key: String) async throws -> [String: String]?
    func objectURL(key: String) -> String?
    /// Uploads the file under `key`; returns where it is now, or throws the reason it is not.
    func upload(file: String, key: String, metadata: [String: String]) async throws -> String
}

/// What happened to one input.
struct Outcome: Sendable {
    enum Status: Sendable {
        case prepared(PrepareReport)
        /// Already prepared with the same content and settings (the manifest's report).
        case unchanged(PrepareReport)
        /// Already at the upload destination from the same content and settings (found by another
        /// machine's run, say): not prepared again.
        case present(url: String)
        /// Not in a format the pipeline decodes.
        case skipped(reason: String)
        case failed(reason: String)
    }

    var input: String
    var output: String
    var sourceBytes: Int
    var status: Status
    var seconds: Double
    /// Where the output was uploaded (`prepare --upload`).
    var uploadedTo: String?
}

/// Prepares a list of inputs, `jobs` at a time, in a task group: each child holds one photo at a
/// time, so peak memory grows with `jobs`, not with the number of photos. The pipeline's CPU work runs
/// on the concurrency runtime's pool (one thread per core); uploads wait without holding a thread.
final class BatchRunner: Sendable {
    let files: [InputFile]
    let outputRoot: String
    let pipeline: PhotoPipeline
    let manifest: Manifest?
    /// Skip inputs the manifest says are prepared (false with `--force`, which still records).
    let reuse: Bool
    let settings: String
    /// Uploads each output under its relative path (`--upload`); the manifest records a file only
    /// once it is uploaded too, so a re-run resumes unfinished uploads.
    let upload: (any BatchUpload)?

    init(files: [InputFile], outputRoot: String, pipeline: PhotoPipeline, manifest: Manifest?, reuse: Bool = true,
                 upload: (any BatchUpload)? = nil) {
        self.files = files
        self.outputRoot = outputRoot
        self.pipeline = pipeline
        self.manifest = manifest
        self.reuse = reuse
        self.upload = upload
        self.settings = Manifest.settingsKey(pipeline.options) + (upload.map { ";upload=\($0.destination)" } ?? "")
        settingsDigest = String(Manifest.sha256(Array(Manifest.settingsKey(pipeline.options).utf8)).prefix(32))
    }

    /// The pipeline settings, hashed: stored with uploaded objects so that any run can tell whether
    /// an object came from the same settings.
    let settingsDigest: String

    /// Runs the batch; `report` is called once per finished input, never concurrently.
    /// Returns the outcomes in input order (inputs not started because of Ctrl-C are absent).
    func run(jobs: Int, report: @escaping @Sendable (Outcome) -> Void) async -> [Outcome] {
        // Largest files first, so that a big photo does not start last and leave the other cores idle.
        let order = files.indices.sorted { size(of: files[$0]) > size(of: files[$1]) }
        var results = [Outcome?](repeating: nil, count: files.count)
        await BoundedConcurrency.run(count: files.count, limit: jobs, order: order, keepStarting: { !stopRequested.load(ordering: .relaxed) }) {
            await self.process(self.files[$0])
        } finished: { index, outcome in
            results[index] = outcome
            report(outcome)
        }
        return results.compactMap { $0 }
    }

    private func size(of file: InputFile) -> Int { Path.size(of: file.path) ?? 0 }

    /// The thumbnails' paths under the output folder (`--thumbnails`), in the pipeline's order.
    private func thumbnailKeys(of file: InputFile) -> [String] {
        pipeline.options.thumbnails.flatMap { edge in
            [Thumbnail.key(of: file.relativeOutput, edge: edge)] + (pipeline.options.webpThumbnails ? [Thumbnail.webpKey(of: file.relativeOutput, edge: edge)] : [])
        }
    }

    func process(_ file: InputFile) async -> Outcome {
        let start = ContinuousClock.now
        let outputPath = Path.join(outputRoot, file.relativeOutput)
        var outcome = Outcome(input: file.path, output: outputPath, sourceBytes: 0, status: .failed(reason: ""), seconds: 0)
        var bytes: [UInt8]
        do {
            bytes = try FileBytes.read(file.path)
        } catch {
            outcome.status = .failed(reason: "\(file.path): \(PhotoPrepError(error.stage, error.kind, error.message))")
            return outcome
        }
        outcome.sourceBytes = bytes.count
        let hash = Manifest.sha256(bytes)
        if reuse, let report = manifest?.upToDateReport(output: file.relativeOutput, outputPath: outputPath, sourceSHA256: hash, settings: settings),
            thumbnailKeys(of: file).allSatisfy({ Path.size(of: Path.join(outputRoot, $0)) != nil }) {
            outcome.status = .unchanged(report)
            return outcome
        }
        // What the destination holds under the key (S3: HEAD) says whether this photo is done already.
        let metadata = ["photoprep-source-sha256": hash, "photoprep-settings": settingsDigest]
        if reuse, let upload, upload.knowsObjects {
            let key = file.relativeOutput
            if let existing = try? await upload.existingObject(key: key),
                existing.merging(metadata, uniquingKeysWith: { $1 }) == existing {
                outcome.status = .present(url: upload.objectURL(key: key) ?? key)
                outcome.seconds = seconds(since: start)
                return outcome
            }
        }
        do {
            let photo = try pipeline.prepare(taking: &bytes, file: file.path)
            // The thumbnails before the photo, on disk and at the destination: a photo that is there has its thumbnails.
            let thumbnails = photo.thumbnails.flatMap { thumbnail in
                [(key: Thumbnail.key(of: file.relativeOutput, edge: thumbnail.edge), bytes: thumbnail.jpeg)]
                    + (thumbnail.webp.map { [(key: Thumbnail.webpKey(of: file.relativeOutput, edge: thumbnail.edge), bytes: $0)] } ?? [])
            }
            for thumbnail in thumbnails { try AtomicFile.write(thumbnail.bytes, to: Path.join(outputRoot, thumbnail.key)) }
            try AtomicFile.write(photo.jpeg, to: outputPath)
            if let upload {
                do {
                    for thumbnail in thumbnails {
                        _ = try await upload.upload(file: Path.join(outputRoot, thumbnail.key), key: thumbnail.key, metadata: metadata)
                    }
                    outcome.uploadedTo = try await upload.upload(file: outputPath, key: file.relativeOutput, metadata: metadata)
                } catch {
                    outcome.status = .failed(reason: "\(file.path): \(error)")
                    outcome.seconds = seconds(since: start)
                    return outcome
                }
            }
            try manifest?.record(.init(output: file.relativeOutput, sourceSHA256: hash, settings: settings, report: photo.report))
            outcome.status = .prepared(photo.report)
        } catch let error as PhotoPrepError {
            let named = "\(file.path): \(PhotoPrepError(error.stage, error.kind, error.message))"
            outcome.status = error.kind == .unsupportedFormat ? .skipped(reason: named) : .failed(reason: named)
        } catch {
            outcome.status = .failed(reason: "\(error)")
        }
        outcome.seconds = seconds(since: start)
        return outcome
    }
}

package func seconds(since start: ContinuousClock.Instant) -> Double {
    let (s, atto) = (ContinuousClock.now - start).components
    return Double(s) + Double(atto) / 1e18
}
