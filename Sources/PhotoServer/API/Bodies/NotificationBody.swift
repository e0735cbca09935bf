import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct NotificationBody: Encodable {
    var id: Int64
    var groupId: String
    var kind: String
    var deepLink: String
    var createdAt: Date

    init(_ notification: GroupNotification) {
        id = notification.id ?? 0
        groupId = notification.groupId
        kind = notification.kind
        deepLink = notification.deepLink
        createdAt = notification.createdAt
    }
}
