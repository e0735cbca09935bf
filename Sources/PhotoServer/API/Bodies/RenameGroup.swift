import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct RenameGroup: Decodable {
    var name: String
}
