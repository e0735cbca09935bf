import Foundation
import Hummingbird
import PhotoServices

/// A photo the app's review quarantined, as its admins see it (`/v1/quarantine`).
struct QuarantinedPhotoBody: ResponseEncodable {
    var key: String
    /// Why (nil once released).
    var quarantine: String?
    var uploadedBy: String?
    var storedAt: Date
    var size: Int64
    /// Where to look at it (`/media/…?v=…&token=…`).
    var downloadURL: String

    init(_ photo: StoredPhoto, base: String) {
        key = photo.key
        quarantine = photo.quarantine
        uploadedBy = photo.uploadedBy
        storedAt = photo.storedAt
        size = photo.size
        downloadURL = MediaRoutes.downloadURL(photo, base: base)
    }
}
