import ArgumentParser
import PhotoBatch
import Foundation
import PhotoFiles
import PhotoUpload
import Synchronization

/// Where an `s3://` destination is and how it is addressed (keys come from the environment or
/// `~/.aws/credentials`, never from the command line).
struct S3Options: ParsableArguments {
    @Option(help: "s3:// destinations: the endpoint (default AWS_ENDPOINT_URL, else AWS for the region).")
    var s3Endpoint: String?

    @Option(help: "s3:// destinations: the region (default AWS_REGION, else us-east-1).")
    var s3Region: String?

    @Option(help: "s3:// destinations: path or virtual addressing (default: path with a custom endpoint).")
    var s3Addressing: String?

    @Option(help: "s3:// destinations: the profile of ~/.aws/credentials to take the keys from (default AWS_PROFILE, else default), when AWS_ACCESS_KEY_ID is not set.")
    var s3Profile: String?

    /// The environment an `s3://` destination reads, with the options above taking precedence.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        if let s3Endpoint { environment["AWS_ENDPOINT_URL_S3"] = s3Endpoint }
        if let s3Region { environment["AWS_REGION"] = s3Region }
        if let s3Addressing { environment["AWS_S3_ADDRESSING_STYLE"] = s3Addressing }
        if let s3Profile { environment["AWS_PROFILE"] = s3Profile }
        return environment
    }
}

/// How uploads behave, whichever command starts them (`upload`, `prepare --upload`, the services).
struct TransferOptions: ParsableArguments {
    @Option(help: "Fixed upload chunk size, e.g. 256KiB (default: 256 KiB, then chunks sized to ~1 s at the measured rate, up to 8 MiB).")
    var chunkSize: ByteSize?

    @Option(help: "Give up after this many seconds without progress (retries, and every request, stay inside it).")
    var retrySeconds: Int = 600

    @Option(help: "Give up on a destination that has never answered (connection refused, no such host, TLS failure) after this many seconds.")
    var connectSeconds: Int = 10

    @Option(help: "The longest one request may wait for its answer, in seconds.")
    var requestTimeout: Int = 30

    @Option(help: ArgumentHelp(
        "Also send uploads and credentials to this origin (https://host:port) when the server places an upload there; by default only the destination's own origin.",
        valueName: "origin"))
    var allowOrigin: [String] = []

    @Option(name: .customLong("protocol"), help: ArgumentHelp(
        "http(s):// destinations: auto (ask the server), tus, or draft-3/draft-5/draft-6 (the IETF resumable-upload draft at that interop version, as URLSession speaks it; the destination is the creation endpoint, e.g. https://host/uploads/).",
        valueName: "protocol"))
    var uploadProtocol: UploadProtocolOption = .auto

    @Flag(inversion: .prefixedNo, help: "Send a SHA-1 checksum with every chunk when the tus server offers it (a corrupted chunk is refused and sent again).")
    var checksums = true

    @Option(help: "s3:// destinations: objects larger than this go as multipart uploads.")
    var multipartThreshold: ByteSize = ByteSize(bytes: 8 * 1024 * 1024)

    @Option(help: "s3:// destinations: multipart part size (at least 5MiB).")
    var partSize: ByteSize = ByteSize(bytes: 8 * 1024 * 1024)

    @Option(help: "s3:// destinations: parts sent at once.")
    var parallelParts: Int = 4

    @OptionGroup var s3: S3Options

    var configuration: UploadConfiguration {
        var configuration = UploadConfiguration()
        if let chunkSize {
            configuration.chunkSize = chunkSize.bytes
            configuration.maxChunkSize = chunkSize.bytes
        }
        configuration.maxRetryDuration = .seconds(max(0, retrySeconds))
        configuration.firstContactDuration = .seconds(max(0, connectSeconds))
        configuration.requestTimeout = .seconds(max(1, requestTimeout))
        configuration.trustedOrigins = Set(allowOrigin)
        configuration.checksums = checksums
        configuration.httpProtocol = uploadProtocol.value
        configuration.multipartThreshold = multipartThreshold.bytes
        configuration.partSize = partSize.bytes
        configuration.parallelParts = parallelParts
        return configuration
    }
}

/// Options every uploading command shares.
struct UploadOptions: ParsableArguments {
    @Option(help: "Sent as 'Authorization: Bearer TOKEN' (default: the PHOTOPREP_TOKEN environment variable, which ps and the shell history do not show).")
    var token: String?

    @Option(help: "Folder for the journal of unfinished uploads (re-running resumes them).")
    var state: String = (FileManager.default.homeDirectoryForCurrentUser.path as NSString).appendingPathComponent(".cache/photoprep/uploads")

    @Option(help: "Concurrent uploads.")
    var parallelUploads: Int = 4

    @OptionGroup var transfer: TransferOptions

    func uploader(to destination: String) throws -> Uploader {
        do {
            return try Uploader(
                destination: destination, configuration: transfer.configuration, journal: UploadJournal(folder: URL(fileURLWithPath: state)),
                environment: transfer.s3.environment)
        } catch {
            throw ValidationError("--to: \(error.message)")
        }
    }

    var authorization: String? {
        (token ?? ProcessInfo.processInfo.environment["PHOTOPREP_TOKEN"]).map { "Bearer \($0)" }
    }
}

struct Upload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload files to a tus server (http(s)://…), an S3 bucket (s3://…) or a folder (file:///…), resumably.",
        discussion: """
            Each file is uploaded under its name (or --key-prefix + name; one file under --key). Unfinished uploads are \
            journalled under --state: re-running the same command resumes them where the server \
            stopped, after Ctrl-C, a kill or a crash.
            Ctrl-C pauses the uploads in flight (the server keeps what it has) and starts no new \
            ones; re-run the same command to resume.
            Exit status: 0 all uploaded, 1 some failed, 2 usage error, 130 interrupted.

            Examples:
              photoprep upload out/*.jpg --to https://uploads.example.com/files/ --token "$TOKEN"
              photoprep upload photo.jpg --to file:///srv/storage --key-prefix user_photos/u1/holiday/
              photoprep upload "My photo é.jpg" --to http://127.0.0.1:8080/files/ --key profile_images/u1/me.jpg
              AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… photoprep upload out/*.jpg --to s3://photos/2026 --s3-region eu-west-1
              photoprep upload photo.jpg --to "$(photoprep presign s3://photos/u1/photo.jpg)"
            """)

    @Argument(help: "Files to upload.")
    var files: [String]

    @Option(help: "Destination: a tus endpoint (http(s)://…), an S3 bucket (s3://bucket/prefix), a presigned S3 PUT URL, or a folder (file:///… or a path).")
    var to: String

    @Option(help: "Prefix of the object keys (the file name follows).")
    var keyPrefix: String = ""

    @Option(help: "The object key of the one file given, whatever its name (e.g. for a name the server refuses).")
    var key: String?

    func validate() throws {
        if key != nil && files.count != 1 { throw ValidationError("--key names one file's object; got \(files.count) files") }
        if key != nil && !keyPrefix.isEmpty { throw ValidationError("--key and --key-prefix cannot be combined") }
    }

    @OptionGroup var upload: UploadOptions

    @Flag(help: "One JSON object per upload event on standard output.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    func run() async throws {
        for file in files {
            guard Path.size(of: file) != nil else { throw UsageFailure(message: "\(file): no such file") }
            guard !Path.isFolder(file) else {
                throw UsageFailure(message: "\(file): a folder; upload takes files ('photoprep prepare FOLDER --upload URL' uploads a folder's photos)")
            }
        }
        let uploader = try upload.uploader(to: to)
        let start = ContinuousClock.now
        let uploads = UploadRun(uploader: uploader, json: json, quiet: quiet)
        let interrupts = Interrupts.install("pausing the uploads; re-run the same command to resume") { uploads.pauseAll() }
        let counts = await uploads.run(
            files.map { ($0, key ?? keyPrefix + ($0 as NSString).lastPathComponent) }, authorization: upload.authorization,
            parallel: upload.parallelUploads)
        interrupts.cancel()
        let elapsed = seconds(since: start)
        if !json && !quiet {
            if isatty(STDERR_FILENO) == 1 { StandardStream.error.write("\r\u{1B}[2K") }
            let paused = counts.paused + counts.notStarted > 0 ? ", \(counts.paused) paused, \(counts.notStarted) not started (re-run to resume)" : ""
            print("\(counts.uploaded) uploaded, \(counts.failed) failed\(paused) — \(megabytes(Int(counts.bytes))) uploaded in \(String(format: "%.1f", elapsed)) s")
        }
        if counts.paused + counts.notStarted > 0 { throw ExitCode(130) }
        if counts.failed > 0 { throw ExitCode(1) }
    }
}

/// Uploads (file, key) pairs, printing progress and outcomes. `pauseAll()` (Ctrl-C) pauses the
/// uploads in flight — nothing is deleted, the journal keeps them — and starts no new ones.
final class UploadRun: Sendable {
    let uploader: Uploader
    let json: Bool
    let quiet: Bool
    private let active = Mutex<[Int: UploadTask]>([:])
    private let tally = Mutex(Tally())

    /// What the live line shows: files done, bytes the destination acknowledged, out of the totals.
    private struct Tally {
        var files = 0, done = 0
        var total: Int64 = 0
        var acknowledged: [Int: Int64] = [:]
        var lastDraw = ContinuousClock.now - .seconds(1)
        let start = ContinuousClock.now
    }

    init(uploader: Uploader, json: Bool, quiet: Bool) {
        self.uploader = uploader
        self.json = json
        self.quiet = quiet
    }

    struct Counts {
        var uploaded = 0, failed = 0, paused = 0, notStarted = 0
        /// The bytes of the files uploaded.
        var bytes: Int64 = 0
    }

    enum Outcome { case uploaded, failed, paused }

    func pauseAll() {
        for task in active.withLock({ Array($0.values) }) { task.pause() }
    }

    /// The live line, like `prepare`'s: `[done/total] acknowledged of total MB · MB/s · ETA`, redrawn at
    /// most every 100 ms; a file that ends is counted (its own line is printed above).
    private func drawProgress(index: Int, acknowledged: Int64? = nil, fileDone: Bool = false) {
        let text = tally.withLock { t -> String? in
            if let acknowledged { t.acknowledged[index] = acknowledged }
            if fileDone { t.done += 1 }
            let now = ContinuousClock.now
            guard !fileDone, now - t.lastDraw > .milliseconds(100) else { return nil }
            t.lastDraw = now
            let sent = t.acknowledged.values.reduce(0, +)
            let rate = Double(sent) / max(seconds(since: t.start), 0.001)
            let eta = rate > 0 ? Double(t.total - sent) / rate : 0
            return "[\(t.done)/\(t.files)] \(megabytes(Int(sent))) of \(megabytes(Int(t.total))) · \(String(format: "%.1f", rate / 1e6)) MB/s · ETA \(Int(eta.rounded())) s"
        }
        if let text { StandardStream.error.write("\r\u{1B}[2K\(text)") }
    }

    func run(_ items: [(path: String, key: String)], authorization: String?, parallel: Int) async -> Counts {
        let live = !json && !quiet && isatty(STDERR_FILENO) == 1
        let sizes = items.map { (try? FileManager.default.attributesOfItem(atPath: $0.path))?[.size] as? Int64 ?? 0 }
        tally.withLock { $0.files = items.count; $0.total = sizes.reduce(0, +) }
        var counts = Counts()
        let begun = await BoundedConcurrency.run(count: items.count, limit: parallel, keepStarting: { !stopRequested.load(ordering: .relaxed) }) {
            [self] index -> Outcome in
            let (path, key) = items[index]
            let started = ContinuousClock.now
            let task = await uploader.upload(.file(path), request: UploadRequest(key: key, authorization: authorization))
            active.withLock { $0[index] = task }
            defer { active.withLock { $0[index] = nil } }
            if stopRequested.load(ordering: .relaxed) { task.pause() }
            for await event in task.events {
                if json {
                    printJSONLine(UploadLine(file: path, key: key, event: event, seconds: event.isTerminal ? seconds(since: started) : nil))
                } else if case .progress(let p) = event, live {
                    drawProgress(index: index, acknowledged: p.acknowledged)
                }
                if event.isTerminal, live { drawProgress(index: index, fileDone: true) }
                switch event {
                case .finished(let location):
                    if !json && !quiet { print("\(live ? "\r\u{1B}[2K" : "")\(path) → \(location)") }
                    return .uploaded
                case .failed(let error):
                    StandardStream.error.write("\(live ? "\r\u{1B}[2K" : "")error: \(path): \(error)\n")
                    return .failed
                case .cancelled:
                    StandardStream.error.write("cancelled: \(path)\n")
                    return .failed
                case .paused(let p):
                    if !json && !quiet {
                        StandardStream.error.write("\(live ? "\r\u{1B}[2K" : "")paused: \(path) at \(p.acknowledged)/\(p.total) bytes\n")
                    }
                    return .paused
                case .retrying(let retry):
                    // Every retry is shown: on the live line, as a line on a pipe, as an event in --json.
                    if live {
                        StandardStream.error.write(String("\r\u{1B}[2K\(path): \(retry)".prefix(400)))
                    } else if !json && !quiet {
                        StandardStream.error.write("retrying: \(path): \(retry)\n")
                    }
                case .started, .progress:
                    break
                }
            }
            return .failed
        } finished: { index, outcome in
            switch outcome {
            case .uploaded:
                counts.uploaded += 1
                counts.bytes += sizes[index]
            case .failed: counts.failed += 1
            case .paused: counts.paused += 1
            }
        }
        counts.notStarted = items.count - begun
        return counts
    }

    struct UploadLine: Encodable {
        var file: String
        var key: String
        var event: String
        var acknowledged: Int64?
        var sent: Int64?
        var total: Int64?
        var location: String?
        var error: String?
        /// On `retrying`: which attempt failed, why, and the seconds until the next.
        var attempt: Int?
        var reason: String?
        var retryIn: Double?
        /// On the terminal event: seconds since the upload started (discovery, hashing and every request).
        var seconds: Double?

        init(file: String, key: String, event: UploadEvent, seconds: Double? = nil) {
            self.file = file
            self.key = key
            self.seconds = seconds
            switch event {
            case .progress(let p), .paused(let p):
                self.event = event.isPause ? "paused" : "progress"
                acknowledged = p.acknowledged; sent = p.sent; total = p.total
            case .retrying(let retry):
                self.event = "retrying"; attempt = retry.attempt; reason = retry.reason
                retryIn = (retry.delay / .milliseconds(1)).rounded() / 1000
            case .started(let location): self.event = "started"; self.location = location
            case .finished(let location): self.event = "finished"; self.location = location
            case .failed(let error): self.event = "failed"; self.error = error.description
            case .cancelled: self.event = "cancelled"
            }
        }
    }

}

extension UploadEvent {
    var isPause: Bool { if case .paused = self { true } else { false } }
}

/// `--protocol`: how an http(s):// destination is spoken to.
enum UploadProtocolOption: String, ExpressibleByArgument, CaseIterable {
    case auto, tus
    case draft3 = "draft-3"
    case draft5 = "draft-5"
    case draft6 = "draft-6"

    var value: HTTPUploadProtocol {
        switch self {
        case .auto: .automatic
        case .tus: .tus
        case .draft3: .ietfDraft(interopVersion: 3)
        case .draft5: .ietfDraft(interopVersion: 5)
        case .draft6: .ietfDraft(interopVersion: 6)
        }
    }
}
