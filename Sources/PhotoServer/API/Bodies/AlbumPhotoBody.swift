import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct AlbumPhotoBody: Encodable {
    var id: String
    var album: String
    var key: String
    /// The photo's download URL, as `downloadURL`.
    var url: String?
    var downloadURL: String?
    var thumbnails: [ThumbnailBody]?
    /// Its placeholder (a ThumbHash, base64), drawn while it loads.
    var placeholder: String?
    /// When it was taken (ISO 8601, with the offset it was taken at), if its EXIF said: the album's order.
    var takenAt: String?
    /// Why the app's review quarantined it (state `quarantined`).
    var quarantine: String?
    var state: String
    var createdAt: Date

    init(_ photo: AlbumPhoto) {
        id = photo.id
        album = photo.album
        key = photo.key
        state = photo.state == .done ? "ready" : photo.state.rawValue
        createdAt = photo.createdAt
    }
}
