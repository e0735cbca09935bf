import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct GroupBody: ResponseEncodable {
    var id: String
    var name: String
    var createdBy: String
    var createdAt: Date
    var updatedAt: Date
    var members: [MemberBody]
    var photo: PhotoBody

    init(_ group: ChatGroup, members: [GroupMember]) {
        id = group.id
        name = group.name
        createdBy = group.createdBy
        createdAt = group.createdAt
        updatedAt = group.updatedAt
        self.members = members.map { MemberBody(userId: $0.userId, isAdmin: $0.isAdmin) }
        photo = PhotoBody(group)
    }
}
