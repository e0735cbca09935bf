import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

/// A thumbnail of a photo: the long edge it was made for, its size, and its download URL.
struct ThumbnailBody: Encodable {
    var edge: Int
    var width: Int
    var height: Int
    /// JPEG, or WebP to a client whose `Accept` names image/webp when the thumbnail has one.
    var downloadURL: String
    /// Its WebP, when one was made (the same picture in fewer bytes).
    var webpDownloadURL: String?
}
