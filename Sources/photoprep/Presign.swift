import ArgumentParser
import PhotoBatch
import Foundation
import PhotoUpload

struct Presign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presign",
        abstract: "Print a presigned S3 PUT URL: whoever holds it may upload that one object, without the keys.",
        discussion: """
            The keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); the \
            endpoint, region and addressing from the options or AWS_ENDPOINT_URL / AWS_REGION.

            Example:
              url=$(photoprep presign s3://photos/profile_images/u1/me.jpg --expires 600)
              photoprep upload me.jpg --to "$url"
            """)

    @Argument(help: "The object: s3://bucket/key.")
    var object: String

    @Option(help: "Seconds the URL stays valid (at most 604800, S3's limit).")
    var expires: Int = 3600

    @OptionGroup var s3: S3Options

    func validate() throws {
        if !(1...604_800).contains(expires) { throw ValidationError("--expires must be between 1 and 604800 seconds") }
    }

    func run() throws {
        guard object.hasPrefix("s3://") else { throw ValidationError("\(object): expected s3://bucket/key") }
        let path = object.dropFirst("s3://".count)
        let bucket = String(path.prefix { $0 != "/" })
        let key = String(path.dropFirst(bucket.count + 1))
        guard !key.isEmpty else { throw ValidationError("\(object): no object key") }
        let store: S3Store
        do {
            store = try S3Store(url: "s3://\(bucket)", environment: s3.environment)
        } catch {
            throw ValidationError("\(error.message)")
        }
        print(store.presignedPUT(key: key, expires: expires).absoluteString)
    }
}
