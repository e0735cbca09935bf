import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct MessagePage: ResponseEncodable {
    var messages: [MessageBody]
    var next: Int64?
}
