import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// How the API reads request bodies (`request.decode(as:context:)`): JSON only (415 otherwise), at most
/// 256 KiB (413), and a body that is not the JSON the operation takes is a 400 problem naming why.
struct APIRequestDecoder: RequestDecoder {
    static let maxBody = 256 * 1024

    func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") ?? false else {
            throw Problem(.unsupportedMediaType, "content-type", "the body must be application/json")
        }
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: Self.maxBody) } catch {
            throw Problem(.contentTooLarge, "body-too-large", "the body is larger than 256 KiB")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw Problem(.badRequest, "malformed-body", "the body is not the JSON this operation takes: \(Self.reason(error))")
        }
    }

    /// Why the body did not decode, in the API's terms: the field and what is wrong with it — not the decoder's
    /// own description, which names Swift's types (`DecodingError.typeMismatch`, `Array<Any>`).
    static func reason(_ error: any Error) -> String {
        func field(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let names = (path + (key.map { [$0] } ?? [])).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "the body" : "\"\(names.joined(separator: "."))\""
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?: return "\(field(context.codingPath, key)) is missing"
        case .valueNotFound(_, let context)?: return "\(field(context.codingPath)) is null"
        case .typeMismatch(_, let context)?: return "\(field(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context)?: return context.codingPath.isEmpty ? "it is not valid JSON" : "\(field(context.codingPath)) is not valid"
        default: return "it cannot be read"
        }
    }
}
