import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct MemberBody: Encodable {
    var userId: String
    var isAdmin: Bool
}
