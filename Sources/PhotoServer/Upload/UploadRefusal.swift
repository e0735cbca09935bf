import HTTPTypes

/// Why an upload call was refused, in no protocol's terms: each dialect answers it with its status and
/// message and its own headers.
struct UploadRefusal: Error, CustomStringConvertible {
    var status: HTTPResponse.Status
    var description: String
    /// The refusals metric's label (counted when the refusal was made).
    var reason: String
    /// What the server holds, when the claimed offset was not it (409).
    var held: Int64?
    /// When asking again may succeed (503), in seconds.
    var retryAfter: Int?
}
