import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct UpdateMe: Decodable {
    var displayName: String
}
