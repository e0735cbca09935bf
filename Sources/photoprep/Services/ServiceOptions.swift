import ArgumentParser
import PhotoBatch
import Foundation
import PhotoServices
import PhotoUpload

/// Options every service command shares: where the app's data lives, where photos go, who calls.
struct ServiceOptions: ParsableArguments {
    @Option(help: "The services' folder: app.sqlite, the local store storage/ and state/ (staged photos, upload journal).")
    var data: String = "photoprep-data"

    @Option(help: ArgumentHelp(
        "The services' database: a postgres:// URL (shared by several servers) or an SQLite file (env PHOTOPREP_DATABASE; default DATA/app.sqlite).",
        valueName: "url-or-file"))
    var database: String?

    @Option(help: ArgumentHelp(
        "Seconds a photo job stays with the process running it unless renewed: after a crash, how long until another process takes it over.",
        visibility: .hidden))
    var jobLease: Double = 30

    @Option(help: "Where photos go: a tus endpoint (http(s)://…), an S3 bucket (s3://…) or a folder (file:///…). Default: DATA/storage.")
    var to: String?

    @Option(help: ArgumentHelp(
        "Call 'photoprep serve' at this URL (remote mode) instead of the embedded services: groups through its API, photos to its upload endpoint, signed in with the token.",
        discussion: "What cannot reach the server is kept in DATA/client.sqlite and sent by 'photoprep sync --server URL'.",
        valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp(
        "A file holding the signed-in user's bearer token (a JWT from the identity provider) for the server (default: the PHOTOPREP_TOKEN environment variable).",
        discussion: "Tokens are never taken as arguments, where ps and the shell history would show them. The client mints nothing: it is handed a token.",
        valueName: "file"))
    var tokenFile: String?

    @Flag(help: "One JSON object per event on standard output.")
    var json = false

    /// Past `--retry-seconds` of an unreachable destination, a photo stays pending for `photoprep sync`.
    @OptionGroup var transfer: TransferOptions

    /// The embedded services, uploading to `destination` (default: `--to`, else DATA/storage).
    func services(to destination: String? = nil) async throws -> PhotoServices {
        guard server == nil else { throw CommandFailure(message: "this command works on the embedded services (--data); it has no --server mode") }
        let folder = URL(fileURLWithPath: data)
        let token = try token()
        let location = database ?? ProcessInfo.processInfo.environment["PHOTOPREP_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? folder.appendingPathComponent("app.sqlite").path
        return try await serviceCall {
            try PhotoServices(
                database: await AppDatabase.open(location),
                destination: destination ?? to ?? folder.appendingPathComponent("storage").standardizedFileURL.absoluteString,
                stateFolder: folder.appendingPathComponent("state"), upload: transfer.configuration, environment: transfer.s3.environment,
                lease: lease, credentials: { _ in token.map { "Bearer \($0)" } })
        }
    }

    var lease: Duration { .milliseconds(Int(max(jobLease, 0.5) * 1000)) }

    /// The signed-in user for the embedded services (`--as`); with `--server` the token says who calls.
    func caller(_ given: String?) throws -> String {
        guard let given else { throw CommandFailure(message: "--as names the signed-in user (required without --server)") }
        return given
    }

    /// The remote mode's client when `--server` is given (nil: the embedded services). `caller` is the
    /// command's `--as`, which only the embedded services take: with `--server` the token names the user.
    func client(as caller: String? = nil) async throws -> PhotoClient? {
        guard let server else { return nil }
        guard caller == nil else { throw CommandFailure(message: "--as: with --server the token names the signed-in user") }
        guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw CommandFailure(message: "--server \(server): not an http(s) URL")
        }
        guard to == nil else { throw CommandFailure(message: "--to is for the embedded services; with --server photos go to the server") }
        guard let token = try token() else {
            throw CommandFailure(message: "--server needs the signed-in user's token: PHOTOPREP_TOKEN or --token-file")
        }
        guard database == nil else { throw CommandFailure(message: "--database is for the embedded services; with --server the client keeps DATA/client.sqlite") }
        return try await serviceCall {
            try await PhotoClient(
                server: url, folder: URL(fileURLWithPath: data), upload: transfer.configuration,
                requestTimeout: .seconds(transfer.requestTimeout), lease: lease, token: { token })
        }
    }

    /// The token from `--token-file` or `PHOTOPREP_TOKEN` (nil: none given).
    private func token() throws -> String? {
        try tokenFile.map { path in
            do {
                let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { throw CommandFailure(message: "\(path): the token file is empty") }
                return text
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw CommandFailure(message: "\(path): cannot read the token: \(error.localizedDescription)")
            }
        } ?? ProcessInfo.processInfo.environment["PHOTOPREP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Follows photo jobs to their end, printing progress (a live line on a terminal) and outcomes;
/// returns how many did not finish.
func follow(_ jobs: [(id: String, label: String)], in photoJobs: PhotoJobs, json: Bool) async -> Int {
    let live = !json && isatty(STDERR_FILENO) == 1
    var unfinished = 0
    for (id, label) in jobs {
        for await event in await photoJobs.events(id) {
            if event.isTerminal, !event.isFinished { unfinished += 1 }
            if json {
                printJSONLine(JobLine(job: id, label: label, event: event))
                continue
            }
            switch event {
            case .preparing:
                if live { StandardStream.error.write("\r\u{1B}[2K\(label): preparing") }
            case .progress(let p):
                if live { StandardStream.error.write("\r\u{1B}[2K\(label): \(p.acknowledged)/\(p.total) bytes (\(Int(p.fraction * 100)) %)") }
            case .retrying(let retry):
                StandardStream.error.write(live ? "\r\u{1B}[2K\(label): \(retry)" : "\(label): \(retry)\n")
            case .finished(let url):
                print("\(live ? "\r\u{1B}[2K" : "")\(label): uploaded → \(url)")
            case .pending(let reason):
                StandardStream.error.write("\(live ? "\r\u{1B}[2K" : "")\(label): pending — \(reason)\n  kept for later: run 'photoprep sync'\n")
            case .failed(let reason):
                StandardStream.error.write("\(live ? "\r\u{1B}[2K" : "")\(label): failed — \(reason)\n")
            case .cancelled:
                StandardStream.error.write("\(label): cancelled\n")
            }
        }
    }
    return unfinished
}

extension PhotoJobEvent {
    var isFinished: Bool { if case .finished = self { true } else { false } }
}

struct JobLine: Encodable {
    var job: String
    var label: String
    var event: String
    var acknowledged: Int64?
    var total: Int64?
    var url: String?
    var reason: String?
    var attempt: Int?
    var retryIn: Double?

    init(job: String, label: String, event: PhotoJobEvent) {
        self.job = job
        self.label = label
        switch event {
        case .preparing: self.event = "preparing"
        case .progress(let p): self.event = "progress"; acknowledged = p.acknowledged; total = p.total
        case .retrying(let retry):
            self.event = "retrying"; attempt = retry.attempt; reason = retry.reason
            retryIn = (retry.delay / .milliseconds(1)).rounded() / 1000
        case .finished(let url): self.event = "finished"; self.url = url
        case .pending(let reason): self.event = "pending"; self.reason = reason
        case .failed(let reason): self.event = "failed"; self.reason = reason
        case .cancelled: self.event = "cancelled"
        }
    }
}

/// A service's refusal as a command error: the message, exit status 1.
func serviceCall<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ServiceError {
        throw CommandFailure(message: error.description)
    }
}

/// A remote call's refusal as a command error: the message, exit status 1.
func serviceCall<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ServiceError {
        throw CommandFailure(message: error.description)
    }
}

/// Prints a photo's state and links: one JSON line, or a line each (the download URL is what an app shows).
func printPhoto(_ photo: PhotoLinks, label: String, json: Bool) {
    if json { return printJSONLine(photo) }
    print("\(label): \(photo.state)")
    if let url = photo.downloadURL { print("  download: \(url)") } else if let url = photo.url { print("  stored at: \(url)") }
    printThumbnails(photo.thumbnails)
}

/// A line for each thumbnail: its size and download URL.
func printThumbnails(_ thumbnails: [PhotoLinks.Thumbnail]?) {
    for thumbnail in thumbnails ?? [] {
        print("  thumbnail \(thumbnail.edge) px (\(thumbnail.width)×\(thumbnail.height)): \(thumbnail.downloadURL)")
    }
}
