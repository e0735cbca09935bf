import Foundation

/// Bytes and photos in a user's own folders (`profile_images/{user}/`, `user_photos/{user}/`): what they may keep
/// (`StorageQuota`) and what they keep (`StorageUsage`, read from the stored photos' records). Bytes are each photo's
/// with its thumbnails and their WebPs, as stored. A group's photo is the group's, counted for nobody. The server's
/// quota (`--quota-bytes`, `--quota-photos`) holds for everyone without one of their own (`photoprep user quota`).
public struct StorageAmount: Sendable, Equatable, Codable {
    public var bytes: Int64
    public var photos: Int64

    public init(bytes: Int64, photos: Int64) {
        self.bytes = bytes
        self.photos = photos
    }

    /// The server's quota unless it is given: 1 GiB and 10,000 photos a user.
    public static let standard = StorageAmount(bytes: 1 << 30, photos: 10_000)

    /// What of this quota `usage` is over (nil: within): "1073741824 bytes" and/or "10000 photos".
    public func exceeded(by usage: StorageAmount) -> String? {
        let over = [usage.bytes > bytes ? "\(bytes) bytes" : nil, usage.photos > photos ? "\(photos) photos" : nil].compactMap { $0 }
        return over.isEmpty ? nil : over.joined(separator: " and ")
    }
}

/// What a user may keep stored.
public typealias StorageQuota = StorageAmount
/// What a user keeps stored.
public typealias StorageUsage = StorageAmount
