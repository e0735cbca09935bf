import Hummingbird
import PhotoServices

/// `GET /v1/me/usage`: what the caller keeps stored in their own folders and their quota.
struct UsageBody: ResponseEncodable {
    var bytes: Int64
    var photos: Int64
    /// Theirs, else the server's; null (said, not left out) when the server keeps no quotas.
    var quota: StorageQuota?

    enum CodingKeys: String, CodingKey { case bytes, photos, quota }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(photos, forKey: .photos)
        try container.encode(quota, forKey: .quota)
    }
}
