import HTTPTypes
import Hummingbird

/// The paging parameters of the API's lists.
enum Paging {
    static func limit(_ request: Request) throws(Problem) -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return 50 }
        guard let value = Int(text), (1...200).contains(value) else { throw Problem(.badRequest, "limit", "limit must be 1–200", field: "limit") }
        return value
    }

    /// `after`: the last message or notification id of the previous page.
    static func after(_ request: Request) throws(Problem) -> Int64 {
        guard let text = request.uri.queryParameters.get("after") else { return 0 }
        guard let value = Int64(text), value >= 0 else { throw Problem(.badRequest, "after", "after must be a message or notification id", field: "after") }
        return value
    }
}
