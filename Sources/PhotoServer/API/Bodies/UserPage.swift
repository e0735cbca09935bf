import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct UserPage: ResponseEncodable {
    var users: [UserBody]
    var nextCursor: String?
}
