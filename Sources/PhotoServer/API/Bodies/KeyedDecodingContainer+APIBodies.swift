import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

extension KeyedDecodingContainer {
    /// An optional field as `openapi.yaml` has it: left out, or a value — never null.
    func decodeUnlessAbsent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(T.self, forKey: key) : nil
    }
}
