import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct CreateGroup: Decodable {
    var name: String
    var participants: [String]
    var id: String?

    init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: CodingKeys.self)
        name = try body.decode(String.self, forKey: .name)
        participants = try body.decode([String].self, forKey: .participants)
        id = try body.decodeUnlessAbsent(String.self, forKey: .id)
    }

    private enum CodingKeys: String, CodingKey { case name, participants, id }
}
