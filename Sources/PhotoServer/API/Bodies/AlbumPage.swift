import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct AlbumPage: ResponseEncodable {
    var photos: [AlbumPhotoBody]
}
