/// Which thumbnails photos get when they arrive at the server, by path: squares' sides for avatars, long edges for
/// album photos, in pixels.
public struct ThumbnailSizes: Sendable, Equatable {
    /// Group photos and profile pictures: avatars in conversation lists and on profiles, shown as circles.
    public var avatar: [Int]
    /// Album photos: a grid.
    public var album: [Int]
    /// Avatars are squares (`SquareCrop`: the focal point, else the attention rule, else the centre); false: long-edge fits.
    public var squareAvatars: Bool

    public init(avatar: [Int] = [128, 256], album: [Int] = [512], squareAvatars: Bool = true) {
        self.avatar = avatar
        self.album = album
        self.squareAvatars = squareAvatars
    }

    /// Whether the thumbnails of `path` are squares.
    public func square(for path: StoragePath) -> Bool {
        switch path {
        case .groupPhoto, .profileImage: squareAvatars
        case .userPhoto: false
        }
    }

    public func edges(for path: StoragePath) -> [Int] {
        switch path {
        case .groupPhoto, .profileImage: avatar
        case .userPhoto: album
        }
    }
}
