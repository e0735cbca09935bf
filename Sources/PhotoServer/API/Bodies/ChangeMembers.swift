import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

struct ChangeMembers: Decodable {
    var add: [String]?
    var remove: [String]?

    init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: CodingKeys.self)
        add = try body.decodeUnlessAbsent([String].self, forKey: .add)
        remove = try body.decodeUnlessAbsent([String].self, forKey: .remove)
    }

    private enum CodingKeys: String, CodingKey { case add, remove }
}
