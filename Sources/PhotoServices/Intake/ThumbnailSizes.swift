/// Which thumbnails photos get when they arrive at the server, by path: long edges in pixels.
public struct ThumbnailSizes: Sendable, Equatable {
    /// Group photos and profile pictures: avatars in conversation lists and on profiles.
    public var avatar: [Int]
    /// Album photos: a grid.
    public var album: [Int]

    public init(avatar: [Int] = [128, 256], album: [Int] = [512]) {
        self.avatar = avatar
        self.album = album
    }

    public func edges(for path: StoragePath) -> [Int] {
        switch path {
        case .groupPhoto, .profileImage: avatar
        case .userPhoto: album
        }
    }
}
