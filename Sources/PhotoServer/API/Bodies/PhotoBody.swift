import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct PhotoBody: ResponseEncodable {
    /// none, pending, uploading, ready, quarantined (stored, held by the app's review), failed, cancelled
    var state: String
    /// The photo's download URL, as `downloadURL` (never where storage keeps it: that stays on the server).
    var url: String?
    /// The URL an image view loads it from, no `Authorization` needed (`/media/…?v=…&token=…`).
    var downloadURL: String?
    /// Its thumbnails, smallest first, each with its download URL.
    var thumbnails: [ThumbnailBody]?
    /// Its placeholder (a ThumbHash, base64), drawn while it loads.
    var placeholder: String?
    /// When it was taken (ISO 8601, with the offset it was taken at), if its EXIF said.
    var takenAt: String?
    /// The focal point its square thumbnails are centred on (`x,y`), when one was given.
    var focus: String?
    /// Why the app's review quarantined it (for its uploader and the admins; anyone else gets only the state).
    var quarantine: String?
    var error: String?
    var acknowledgedBytes: Int64?
    var totalBytes: Int64?

    init(state: String, error: String?, acknowledgedBytes: Int64?, totalBytes: Int64?) {
        self.state = state
        self.error = error
        self.acknowledgedBytes = acknowledgedBytes
        self.totalBytes = totalBytes
    }

    init(_ group: ChatGroup) {
        let state = group.photoState == .done ? "ready" : group.photoState.rawValue
        self.init(state: state, error: group.photoError, acknowledgedBytes: nil, totalBytes: nil)
    }
}
