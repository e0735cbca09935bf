import ArgumentParser
import Foundation
import PhotoUpload

/// Options every uploading command shares.
struct UploadOptions: ParsableArguments {
    @Option(help: "Sent as 'Authorization: Bearer TOKEN'.")
    var token: String?

    @Option(help: "Upload chunk size, e.g. 256KiB.")
    var chunkSize: ByteSize = ByteSize(bytes: 256 * 1024)

    @Option(help: "Give up retrying transient failures after this many seconds.")
    var retrySeconds: Int = 600

    @Option(help: "Folder for the journal of unfinished uploads (re-running resumes them).")
    var state: String = (FileManager.default.homeDirectoryForCurrentUser.path as NSString).appendingPathComponent(".cache/photoprep/uploads")

    @Option(help: "Concurrent uploads.")
    var parallelUploads: Int = 4

    func uploader(to destination: String) throws -> Uploader {
        var configuration = UploadConfiguration()
        configuration.chunkSize = chunkSize.bytes
        configuration.maxRetryDuration = .seconds(retrySeconds)
        do {
            return try Uploader(destination: destination, configuration: configuration, journal: UploadJournal(folder: URL(fileURLWithPath: state)))
        } catch {
            throw ValidationError("--to: \(error.message)")
        }
    }

    var authorization: String? { token.map { "Bearer \($0)" } }
}

struct Upload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upload files to a tus server (http(s)://…) or a folder (file:///…), resumably.",
        discussion: """
            Each file is uploaded under its name (or --key-prefix + name). Unfinished uploads are \
            journalled under --state: re-running the same command resumes them where the server \
            stopped, after Ctrl-C, a kill or a crash.
            Exit status: 0 all uploaded, 1 some failed, 2 usage error.

            Examples:
              photoprep upload out/*.jpg --to https://uploads.example.com/files/ --token "$TOKEN"
              photoprep upload photo.jpg --to file:///srv/storage --key-prefix user_photos/u1/holiday/
            """)

    @Argument(help: "Files to upload.")
    var files: [String]

    @Option(help: "Destination: a tus endpoint (http(s)://…) or a folder (file:///… or a path).")
    var to: String

    @Option(help: "Prefix of the object keys (the file name follows).")
    var keyPrefix: String = ""

    @OptionGroup var upload: UploadOptions

    @Flag(help: "One JSON object per upload event on standard output.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    func run() async throws {
        let uploader = try upload.uploader(to: to)
        let start = ContinuousClock.now
        let failed = await UploadRun(uploader: uploader, json: json, quiet: quiet).run(
            files.map { ($0, keyPrefix + ($0 as NSString).lastPathComponent) }, authorization: upload.authorization,
            parallel: upload.parallelUploads)
        let bytes = files.compactMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int }.reduce(0, +)
        let elapsed = seconds(since: start)
        if !json && !quiet {
            print("\(files.count - failed) uploaded, \(failed) failed — \(megabytes(bytes)) in \(String(format: "%.1f", elapsed)) s")
        }
        if failed > 0 { throw ExitCode(1) }
    }
}

/// Uploads (file, key) pairs, printing progress and outcomes; returns how many failed.
struct UploadRun {
    let uploader: Uploader
    let json: Bool
    let quiet: Bool

    func run(_ items: [(path: String, key: String)], authorization: String?, parallel: Int) async -> Int {
        let live = !json && !quiet && isatty(STDERR_FILENO) == 1
        return await withTaskGroup(of: Bool.self) { group in
            var next = 0, failed = 0
            func add() {
                let (path, key) = items[next]
                next += 1
                group.addTask {
                    let task = await uploader.upload(.file(path), request: UploadRequest(key: key, authorization: authorization))
                    var outcome = false
                    for await event in task.events {
                        if json {
                            printJSONLine(UploadLine(file: path, key: key, event: event))
                        } else if case .progress(let p) = event, live {
                            FileHandle.standardError.write(Data("\r\u{1B}[2K\(key): \(p.acknowledged)/\(p.total) bytes (\(Int(p.fraction * 100)) %)".utf8))
                        }
                        switch event {
                        case .finished(let location):
                            outcome = true
                            if !json && !quiet { print("\(live ? "\r\u{1B}[2K" : "")\(path) → \(location)") }
                        case .failed(let error):
                            FileHandle.standardError.write(Data("\(live ? "\r\u{1B}[2K" : "")error: \(path): \(error)\n".utf8))
                        case .cancelled:
                            FileHandle.standardError.write(Data("cancelled: \(path)\n".utf8))
                        default: break
                        }
                    }
                    return outcome
                }
            }
            while next < min(items.count, max(1, parallel)) { add() }
            while let ok = await group.next() {
                if !ok { failed += 1 }
                if next < items.count { add() }
            }
            return failed
        }
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

        init(file: String, key: String, event: UploadEvent) {
            self.file = file
            self.key = key
            switch event {
            case .progress(let p), .paused(let p):
                self.event = event.isPause ? "paused" : "progress"
                acknowledged = p.acknowledged; sent = p.sent; total = p.total
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
