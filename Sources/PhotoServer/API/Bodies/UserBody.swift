import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct UserBody: ResponseEncodable {
    var id: String
    var displayName: String
    /// The picture's download URL, as `profilePhotoDownloadURL` (never where storage keeps it: that stays on the server).
    var profilePhotoURL: String?
    /// The URL an image view loads it from, no `Authorization` needed (`/media/…?v=…&token=…`).
    var profilePhotoDownloadURL: String?
    var profilePhotoThumbnails: [ThumbnailBody]?
    /// The picture's placeholder (a ThumbHash, base64), drawn while it loads.
    var profilePhotoPlaceholder: String?
    /// Why the app's review quarantined the picture (the user and the admins see it; others see no picture).
    var profilePhotoQuarantine: String?

    init(_ user: User) {
        id = user.id
        displayName = user.displayName
    }
}
