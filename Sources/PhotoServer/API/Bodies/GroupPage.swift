import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct GroupPage: ResponseEncodable {
    var groups: [GroupBody]
    var nextCursor: String?
}
