import Dispatch
import Foundation
import PhotoPrep
import PhotoUpload
import Synchronization

/// What happened to one input.
struct Outcome: Sendable {
    enum Status: Sendable {
        case prepared(PrepareReport)
        /// Already prepared with the same content and settings (the manifest's report).
        case unchanged(PrepareReport)
        /// Already at the upload destination from the same content and settings (found by another
        /// machine's run, say): not prepared again.
        case present(url: String)
        /// Not a JPEG or PNG.
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

/// Prepares a list of inputs with `jobs` worker threads. Each worker holds one photo at a time, so
/// peak memory grows with `jobs`, not with the number of photos.
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
    let uploader: Uploader?
    let authorization: String?

    init(files: [InputFile], outputRoot: String, pipeline: PhotoPipeline, manifest: Manifest?, reuse: Bool = true,
         uploader: Uploader? = nil, authorization: String? = nil) {
        self.files = files
        self.outputRoot = outputRoot
        self.pipeline = pipeline
        self.manifest = manifest
        self.reuse = reuse
        self.uploader = uploader
        self.authorization = authorization
        self.settings = Manifest.settingsKey(pipeline.options) + (uploader.map { ";upload=\($0.destination)" } ?? "")
        settingsDigest = String(Manifest.sha256(Array(Manifest.settingsKey(pipeline.options).utf8)).prefix(32))
    }

    /// The pipeline settings, hashed: stored with uploaded objects so that any run can tell whether
    /// an object came from the same settings.
    let settingsDigest: String

    /// Runs the batch; `report` is called once per finished input, never concurrently.
    /// Returns the outcomes in input order (inputs not started because of Ctrl-C are absent).
    func run(jobs: Int, report: @escaping @Sendable (Outcome) -> Void) -> [Outcome] {
        // Largest files first, so that a big photo does not start last and leave the other cores idle.
        let order = files.indices.sorted { size(of: files[$0]) > size(of: files[$1]) }
        let next = Mutex(0)
        let results = Mutex([Outcome?](repeating: nil, count: files.count))
        let group = DispatchGroup()
        for _ in 0..<max(1, min(jobs, files.count)) {
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                while !stopRequested.load(ordering: .relaxed) {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < files.count else { return }
                    let outcome = process(files[order[index]])
                    results.withLock {
                        $0[order[index]] = outcome
                        report(outcome)
                    }
                }
            }
        }
        group.wait()
        return results.withLock { $0.compactMap { $0 } }
    }

    private func size(of file: InputFile) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int ?? 0
    }

    func process(_ file: InputFile) -> Outcome {
        let start = ContinuousClock.now
        let outputPath = (outputRoot as NSString).appendingPathComponent(file.relativeOutput)
        var outcome = Outcome(input: file.path, output: outputPath, sourceBytes: 0, status: .failed(reason: ""), seconds: 0)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            outcome.status = .failed(reason: "\(file.path): read failed: cannot read the file")
            return outcome
        }
        let bytes = [UInt8](data)
        outcome.sourceBytes = bytes.count
        let hash = Manifest.sha256(bytes)
        if reuse, let report = manifest?.upToDateReport(output: file.relativeOutput, outputPath: outputPath, sourceSHA256: hash, settings: settings) {
            outcome.status = .unchanged(report)
            return outcome
        }
        // What the destination holds under the key (S3: HEAD) says whether this photo is done already.
        let metadata = ["photoprep-source-sha256": hash, "photoprep-settings": settingsDigest]
        if reuse, let uploader, uploader.knowsObjects {
            let key = file.relativeOutput, authorization = self.authorization
            let existing = blocking { try? await uploader.existingObject(key: key, authorization: authorization) }
            if let existing, existing.merging(metadata, uniquingKeysWith: { $1 }) == existing {
                outcome.status = .present(url: uploader.objectURL(key: key) ?? key)
                outcome.seconds = seconds(since: start)
                return outcome
            }
        }
        do {
            let photo = try pipeline.prepare(bytes)
            try AtomicFile.write(photo.jpeg, to: outputPath)
            if let uploader {
                let request = UploadRequest(key: file.relativeOutput, metadata: metadata, authorization: authorization)
                let result = blocking { await uploader.upload(.file(outputPath), request: request).result() }
                guard case .finished(let location) = result else {
                    let reason = if case .failed(let error) = result { error.description } else { "upload cancelled" }
                    outcome.status = .failed(reason: "\(file.path): \(reason)")
                    outcome.seconds = seconds(since: start)
                    return outcome
                }
                outcome.uploadedTo = location
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

func seconds(since start: ContinuousClock.Instant) -> Double {
    let (s, atto) = (ContinuousClock.now - start).components
    return Double(s) + Double(atto) / 1e18
}

/// Runs async work from a worker thread (never from the cooperative pool) and waits for it.
func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = Mutex<T?>(nil)
    Task {
        let value = await work()
        box.withLock { $0 = value }
        semaphore.signal()
    }
    semaphore.wait()
    return box.withLock { $0! }
}
