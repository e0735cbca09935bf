import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct MessageBody: Encodable {
    var id: Int64
    var sender: String
    var text: String
    var isSystem: Bool
    var createdAt: Date

    init(_ message: Message) {
        id = message.id ?? 0
        sender = message.sender
        text = message.text
        isSystem = message.isSystem
        createdAt = message.createdAt
    }
}
