import ArgumentParser
import PhotoBatch
import PhotoUpload

/// `photoprep prepare`: the batch (`PrepareArguments`), and with `--upload` each output then uploaded
/// through `PhotoUpload` (resumable; the manifest records a photo once it is uploaded).
struct Prepare: AsyncParsableCommand {
    static let configuration = PrepareArguments.configuration

    @OptionGroup var arguments: PrepareArguments

    @Option(help: "Also upload each output, under its path relative to --out, to a tus endpoint (http(s)://…), an S3 bucket (s3://bucket/prefix) or a folder (file:///…).")
    var upload: String?

    @OptionGroup(title: "Upload options (with --upload)") var uploadOptions: UploadOptions

    func run() async throws {
        let destination = try upload.map { UploaderBatchUpload(uploader: try uploadOptions.uploader(to: $0), authorization: uploadOptions.authorization) }
        try await arguments.settings.run(upload: destination)
    }
}

/// The batch's `BatchUpload` over an `Uploader`.
struct UploaderBatchUpload: BatchUpload {
    let uploader: Uploader
    let authorization: String?

    var destination: String { uploader.destination }
    var knowsObjects: Bool { uploader.knowsObjects }

    func existingObject(key: String) async throws -> [String: String]? {
        try await uploader.existingObject(key: key, authorization: authorization)
    }

    func objectURL(key: String) -> String? { uploader.objectURL(key: key) }

    func upload(file: String, key: String, metadata: [String: String]) async throws -> String {
        let request = UploadRequest(key: key, contentType: key.hasSuffix(".webp") ? "image/webp" : "image/jpeg", metadata: metadata, authorization: authorization)
        switch await uploader.upload(.file(file), request: request).result() {
        case .finished(let location): return location
        case .failed(let error): throw CommandFailure(message: error.description)
        default: throw CommandFailure(message: "upload cancelled")
        }
    }
}
