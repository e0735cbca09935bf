import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// How the API writes its bodies (a `ResponseEncodable` returned by a handler): `application/json`, keys
/// sorted, dates in ISO 8601.
struct APIResponseEncoder: ResponseEncoder {
    func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
