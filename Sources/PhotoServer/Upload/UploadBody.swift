import Hummingbird

/// What an append request brings, as the upload core reads it: the body's bytes and what its headers say of them.
/// The dialects make it from their request (`init(_:)`); the core never sees the request itself.
struct UploadBody: Sendable {
    /// The bytes, as they arrive.
    var bytes: RequestBody
    /// `Content-Length`, when it is a number.
    var declaredLength: Int64?
    /// Whether the body comes in chunks of unknown total (`Transfer-Encoding`).
    var chunked: Bool
    /// Whether the client waits for a go-ahead before sending it (`Expect: 100-continue`).
    var expectsContinue: Bool

    init(bytes: RequestBody, declaredLength: Int64?, chunked: Bool, expectsContinue: Bool) {
        self.bytes = bytes
        self.declaredLength = declaredLength
        self.chunked = chunked
        self.expectsContinue = expectsContinue
    }

    init(_ request: Request) {
        self.init(
            bytes: request.body, declaredLength: Tus.number(request.headers[.contentLength]), chunked: request.headers[.transferEncoding] != nil,
            expectsContinue: request.headers[.expect]?.lowercased() == "100-continue")
    }

    /// Whether it may hold bytes at all (a length above zero, or chunks).
    var mayHoldBytes: Bool { declaredLength.map { $0 > 0 } ?? chunked }
}
