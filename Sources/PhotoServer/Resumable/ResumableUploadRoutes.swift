import Foundation
import HTTPTypes
import Synchronization
import Hummingbird
import HummingbirdCore
import NIOCore
import PhotoServices

/// Resumable uploads as Apple's `URLSession` (iOS 17, macOS 14) speaks them: the IETF HTTP working
/// group's draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload), interop versions
/// 3, 5 and 6 — the ones swift-nio-extras' `NIOResumableUpload` implements.
///
/// - `POST /uploads/{key}` creates an upload of the photo for `key` (e.g. `group_photos/{gid}/photo.jpg`)
///   with `Upload-Complete` (`Upload-Incomplete` in version 3). Once the creation is accepted (the token,
///   the rules, the length), a 104 (Upload Resumption Supported) carrying the upload's URL goes out before
///   the body is read, so a client interrupted half-way knows where to resume; a refused creation gets its
///   refusal and no 104.
/// - `HEAD /resumable/{id}` retrieves the offset; `PATCH` appends at `Upload-Offset`; `DELETE` cancels.
///
/// A dialect of the upload core (`UploadHandler`), as tus 1.0 is: the same JWT authentication, the
/// same storage rules at creation, the same one-writer lock, the same sniffing of the first bytes, the
/// same acknowledgement after `fsync`, the same normalisation on completion — and so the same refusals,
/// with the same status codes.
struct ResumableUploadRoutes: Sendable {
    let uploads: UploadHandler
    /// The address clients reach the server at, for upload locations.
    let address: PublicAddress
    /// The stored photo's download URL, in the answer that completes its upload.
    let links: DownloadLinks

    static let interopVersion = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let uploadComplete = HTTPField.Name("Upload-Complete")!
    static let uploadIncomplete = HTTPField.Name("Upload-Incomplete")!
    static let uploadLimit = HTTPField.Name("Upload-Limit")!
    static let versions: Set<Int> = [3, 5, 6]
    static let partialUpload = "application/partial-upload"

    func register(on router: some RouterMethods<ServerContext>) {
        router.on("/uploads", method: .options) { request, _ in options(request) }
        router.on("/uploads/**", method: .options) { request, _ in options(request) }
        router.post("/uploads/**") { request, context in
            try await answer(request, context) { try await create(request, context, caller: $0, version: $1) }
        }
        router.head("/resumable/:id") { request, context in
            try await answer(request, context) { try await head(request, context, caller: $0, version: $1) }
        }
        router.patch("/resumable/:id") { request, context in
            try await answer(request, context) { try await append(request, context, caller: $0, version: $1) }
        }
        router.delete("/resumable/:id") { request, context in
            try await answer(request, context) { try await cancel(request, context, caller: $0, version: $1) }
        }
    }

    // MARK: - Requests

    private func options(_ request: Request) -> Response {
        var headers = HTTPFields()
        headers[Self.interopVersion] = request.headers[Self.interopVersion].flatMap(Int.init).map(String.init) ?? "6"
        headers[Self.uploadLimit] = "max-size=\(StorageRules.largestUpload)"
        return Response(status: .ok, headers: headers)
    }

    /// `POST /uploads/{key}`: a new upload for `key` (the rules checked at its creation), then the body,
    /// if any, appended at offset 0.
    private func create(_ request: Request, _ context: ServerContext, caller: Caller, version: Int) async throws -> Response {
        guard let complete = Self.completeness(request.headers, version: version) else {
            throw protocolError("Upload-Complete (Upload-Incomplete in interop version 3) is required")
        }
        let rawPath = request.head.path ?? ""
        let encodedKey = rawPath.dropFirst("/uploads/".count).split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let key = String(encodedKey).removingPercentEncoding, !key.isEmpty else {
            throw protocolError("the path /uploads/{key} names no storage key")
        }
        let contentLength = Self.integer(request.headers[.contentLength])
        if Tus.isHugeNumber(request.headers[Tus.uploadLength]) { throw UploadRefusal.lengthTooLong }
        var length = Self.integer(request.headers[Tus.uploadLength])
        if complete, let contentLength {
            if let declared = length, declared != contentLength {
                throw protocolError("Upload-Length \(declared) does not match the complete body's \(contentLength) bytes")
            }
            length = contentLength
        }
        guard let length else {
            throw protocolError("the upload's length must be known when it is created: Upload-Length, or a complete body with Content-Length")
        }
        // The draft has no metadata: a focal point for the photo's square thumbnails comes in the query (`?focus=x,y`).
        let focus = request.uri.queryParameters.get("focus").map { ["focus": $0] } ?? [:]
        let upload = try await uploads.create(caller: caller, key: key, length: length, metadata: focus)
        let location = address.url("/resumable/\(upload.id)", request: request.head)
        if contentLength != 0 {
            var interim = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
            interim.headerFields[Self.interopVersion] = String(version)
            interim.headerFields[.location] = location
            try await CurrentConnection.sendInterim(interim)
        }
        if contentLength == 0 && !complete {
            return answer(status: .created, offset: 0, complete: false, version: version, location: location)
        }
        var answered: Response
        do {
            answered = try await appendBody(request, context, caller: caller, id: upload.id, offset: 0, version: version, creation: true)
        } catch let refused as UploadRefusal {
            answered = response(refused, version)
        }
        answered.headers[.location] = location
        return answered
    }

    /// `HEAD /resumable/{id}`: the offset the server holds, and whether the upload is complete.
    private func head(_ request: Request, _ context: ServerContext, caller: Caller, version: Int) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let (upload, offset) = try await uploads.offset(of: id, caller: caller)
        var response = answer(status: .noContent, offset: offset, complete: offset == upload.length, version: version)
        response.headers[Tus.uploadLength] = String(upload.length)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `PATCH /resumable/{id}`: bytes at `Upload-Offset` (interop version 6: `Content-Type: application/partial-upload`).
    private func append(_ request: Request, _ context: ServerContext, caller: Caller, version: Int) async throws -> Response {
        guard let offset = Self.integer(request.headers[Tus.uploadOffset]) else { throw protocolError("Upload-Offset is missing or not a number") }
        if version >= 6, request.headers[.contentType]?.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces) }) != Self.partialUpload {
            throw UploadRefusal(.wrongBodyType, "appends must be \(Self.partialUpload) (interop version 6)")
        }
        let id = context.parameters.get("id") ?? ""
        // An append may say the upload's length again; it must be the length given at its creation (400 otherwise, as
        // the draft has it), checked with the upload under its lock, before a byte of the body is read.
        let stated = request.headers[Tus.uploadLength].map { Self.integer($0) ?? -1 }
        return try await appendBody(request, context, caller: caller, id: id, offset: offset, version: version, creation: false, statedLength: stated)
    }

    /// `DELETE /resumable/{id}`: the upload and its bytes go.
    private func cancel(_ request: Request, _ context: ServerContext, caller: Caller, version: Int) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        try await uploads.terminate(id, caller: caller)
        var headers = HTTPFields()
        headers[Self.interopVersion] = String(version)
        return Response(status: .noContent, headers: headers)
    }

    /// The request's body appended at `offset`; a request that says it completes the upload must end
    /// exactly at its length. A creation answers 201 (with the upload's URL); an append 204, or 200 when
    /// it completed the upload.
    private func appendBody(
        _ request: Request, _ context: ServerContext, caller: Caller, id: String, offset: Int64, version: Int, creation: Bool, statedLength: Int64? = nil
    ) async throws -> Response {
        let (upload, reached) = try await uploads.append(
            to: id, caller: caller, at: offset, body: UploadBody(request), checksum: nil, log: context.log, statedLength: statedLength)
        let complete = upload.state == .stored
        if Self.completeness(request.headers, version: version) == true, !complete {
            throw protocolError("the request said it completes the upload, but the server holds \(reached) of \(upload.length) bytes")
        }
        guard complete else { return answer(status: creation ? .created : .noContent, offset: reached, complete: false, version: version) }
        // The photo is stored: its key and download URL, in the body (the app shows it).
        var response = answer(status: creation ? .created : .ok, offset: reached, complete: true, version: version)
        response.headers[.contentType] = "application/json"
        let url = try await links.links([upload.key], for: upload.owner, request)[upload.key]?.photo ?? ""
        let body = try JSONSerialization.data(withJSONObject: ["key": upload.key, "url": url], options: [.sortedKeys, .withoutEscapingSlashes])
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        return response
    }

    // MARK: - Answers

    /// Checks the interop version (400 for one we do not speak) and the token, runs `handle`, and
    /// answers a refusal in the draft's terms.
    private func answer(_ request: Request, _ context: ServerContext, _ handle: (Caller, Int) async throws -> Response) async throws -> Response {
        guard let version = request.headers[Self.interopVersion].flatMap(Int.init), Self.versions.contains(version) else {
            let sent = request.headers[Self.interopVersion] ?? "(none)"
            return response(protocolError("Upload-Draft-Interop-Version \(sent) is not supported: 3, 5 or 6"), 6)
        }
        let caller: Caller
        switch context.identity {
        case .success(let who): caller = who
        case .failure(let error):
            return response(UploadRefusal(.notAuthenticated, "not authenticated: \(error.description)"), version)
        }
        do {
            return try await handle(caller, version)
        } catch let refused as UploadRefusal {
            return response(refused, version)
        }
    }

    private func protocolError(_ message: String) -> UploadRefusal {
        UploadRefusal(.malformed, message)
    }

    /// A refusal in the draft's terms, counted: its status, the reason in a plain-text body, and after a 409 what
    /// the server holds (the upload incomplete).
    private func response(_ refused: UploadRefusal, _ version: Int) -> Response {
        uploads.metrics.refusal(refused.reason)
        var headers = HTTPFields()
        headers[Self.interopVersion] = String(version)
        headers[.contentType] = "text/plain; charset=utf-8"
        if let held = refused.held {
            headers[Tus.uploadOffset] = String(held)
            Self.setCompleteness(&headers, false, version: version)
        }
        if let seconds = refused.retryAfter { headers[.retryAfter] = String(seconds) }
        if refused.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: refused.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: refused.description + "\n")))
    }

    private func answer(status: HTTPResponse.Status, offset: Int64, complete: Bool, version: Int, location: String? = nil) -> Response {
        var headers = HTTPFields()
        headers[Self.interopVersion] = String(version)
        headers[Tus.uploadOffset] = String(offset)
        Self.setCompleteness(&headers, complete, version: version)
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers)
    }

    private static func setCompleteness(_ headers: inout HTTPFields, _ complete: Bool, version: Int) {
        if version >= 5 {
            headers[Self.uploadComplete] = complete ? "?1" : "?0"
        } else {
            headers[Self.uploadIncomplete] = complete ? "?0" : "?1"
        }
    }

    // MARK: - Fields

    /// Whether the request completes the upload: `Upload-Complete` (versions 5, 6), the inverse of
    /// `Upload-Incomplete` (version 3); nil when absent or not a structured-field boolean.
    static func completeness(_ fields: HTTPFields, version: Int) -> Bool? {
        func boolean(_ text: String?) -> Bool? {
            switch text?.trimmingCharacters(in: .whitespaces) {
            case "?1": true
            case "?0": false
            default: nil
            }
        }
        return version >= 5 ? boolean(fields[uploadComplete]) : boolean(fields[uploadIncomplete]).map { !$0 }
    }

    /// A structured-field integer (digits only, at most 15 of them).
    static func integer(_ text: String?) -> Int64? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.count <= 15, text.allSatisfy(\.isASCII),
            text.allSatisfy(\.isNumber)
        else { return nil }
        return Int64(text)
    }
}

