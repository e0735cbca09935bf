import ArgumentParser
import Foundation
import PhotoBatch
import PhotoServices

/// `photoprep user quota`: a user's storage usage, and the quota of their own that `photoprep serve` holds them to
/// instead of its `--quota-bytes` / `--quota-photos`.
struct QuotaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quota", abstract: "Show a user's storage usage and own quota; set or remove that quota.",
        discussion: "Without --bytes, --photos or --remove it only shows. A user without a quota of their own has the server's (photoprep serve --quota-bytes, --quota-photos).")

    @Argument(help: "The user id.")
    var id: String

    @Option(help: "Bytes the user may keep stored (their photos with their thumbnails); with --photos.")
    var bytes: Int64?

    @Option(help: "Photos the user may keep stored; with --bytes.")
    var photos: Int64?

    @Flag(help: "Remove the user's own quota: the server's holds again.")
    var remove = false

    @OptionGroup var service: ServiceOptions

    func validate() throws {
        guard (bytes == nil) == (photos == nil) else { throw ValidationError("--bytes and --photos go together") }
        guard !(remove && bytes != nil) else { throw ValidationError("--remove takes no --bytes or --photos") }
        if let bytes, let photos, bytes < 1 || photos < 1 { throw ValidationError("--bytes and --photos: at least 1") }
    }

    func run() async throws {
        let services = try await service.services()
        let quotas = Quotas(database: services.database)
        if remove {
            try await serviceCall { try await quotas.set(nil, for: id) }
        } else if let bytes, let photos {
            try await serviceCall { try await quotas.set(StorageQuota(bytes: bytes, photos: photos), for: id) }
        }
        let account = try await serviceCall { try await quotas.account(of: id) }
        if service.json {
            var line: [String: Any] = ["user": id, "bytes": account.usage.bytes, "photos": account.usage.photos]
            if let own = account.own { line["quota"] = ["bytes": own.bytes, "photos": own.photos] }
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            let own = account.own.map { "its own quota: \($0.photos) photos, \($0.bytes) bytes" } ?? "the server's quota (serve --quota-bytes, --quota-photos)"
            print("\(id): \(account.usage.photos) photos in \(account.usage.bytes) bytes; \(own)")
        }
    }
}
