import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct NotificationPage: ResponseEncodable {
    var notifications: [NotificationBody]
    var next: Int64?
}
