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
///   with `Upload-Complete` (`Upload-Incomplete` in version 3). A 104 (Upload Resumption Supported)
///   carrying the upload's URL goes out before the body is read, so a client interrupted half-way knows
///   where to resume.
/// - `HEAD /resumable/{id}` retrieves the offset; `PATCH` appends at `Upload-Offset`; `DELETE` cancels.
///
/// Every request is translated into the tus server's (`TusRoutes`): the same JWT authentication, the
/// same storage rules at creation, the same one-writer lock, the same sniffing of the first bytes,
/// the same acknowledgement after `fsync`, the same normalisation on completion — and so the same
/// refusals, with the same status codes.
struct ResumableUploadRoutes: Sendable {
    let tus: TusRoutes
    /// Uploads announced (104) whose creation has not finished yet: a client may ask about one before
    /// the server got to create it, and is answered once it did.
    let announced: Announcements

    static let interopVersion = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let uploadComplete = HTTPField.Name("Upload-Complete")!
    static let uploadIncomplete = HTTPField.Name("Upload-Incomplete")!
    static let uploadLimit = HTTPField.Name("Upload-Limit")!
    /// The id the server gave a creation it announced with a 104; set by the server, never by a client.
    static let announcedID = HTTPField.Name("Photoprep-Announced-Upload")!
    static let versions: Set<Int> = [3, 5, 6]
    static let partialUpload = "application/partial-upload"

    func register(on router: Router<ServerContext>) {
        router.on("/uploads", method: .options) { request, _ in options(request) }
        router.on("/uploads/**", method: .options) { request, _ in options(request) }
        router.post("/uploads/**") { request, context in try await versioned(request) { try await create(request, context, version: $0) } }
        router.head("/resumable/:id") { request, context in try await versioned(request) { try await head(request, context, version: $0) } }
        router.patch("/resumable/:id") { request, context in try await versioned(request) { try await append(request, context, version: $0) } }
        router.delete("/resumable/:id") { request, context in try await versioned(request) { try await cancel(request, context, version: $0) } }
    }

    /// `handle` with the interop version the client speaks; 400 for one we do not.
    private func versioned(_ request: Request, _ handle: (Int) async throws -> Response) async throws -> Response {
        guard let version = request.headers[Self.interopVersion].flatMap(Int.init), Self.versions.contains(version) else {
            let sent = request.headers[Self.interopVersion] ?? "(none)"
            return refuse(.badRequest, "Upload-Draft-Interop-Version \(sent) is not supported: 3, 5 or 6", 6)
        }
        return try await handle(version)
    }

    // MARK: - Announcing (before the router)

    /// Called for every request before it is routed: a draft upload creation gets its id now and the
    /// 104 to send ahead of the final response; any other request loses a client's attempt to name one.
    func announce(_ request: Request, publicURL: String?) -> (Request, HTTPResponse?) {
        var head = request.head
        head.headerFields[Self.announcedID] = nil
        guard head.method == .post, let path = head.path, path.hasPrefix("/uploads/"),
            let version = head.headerFields[Self.interopVersion].flatMap(Int.init), Self.versions.contains(version),
            Self.completeness(head.headerFields, version: version) != nil
        else {
            return request.headers[Self.announcedID] == nil ? (request, nil) : (Request(head: head, body: request.body), nil)
        }
        let id = TusUpload.newID()
        announced.add(id)
        head.headerFields[Self.announcedID] = id
        var interim = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
        interim.headerFields[Self.interopVersion] = String(version)
        interim.headerFields[.location] = TusRoutes.url("/resumable/\(id)", publicURL: publicURL, request: head)
        return (Request(head: head, body: request.body), interim)
    }

    // MARK: - Requests

    private func options(_ request: Request) -> Response {
        var headers = HTTPFields()
        headers[Self.interopVersion] = request.headers[Self.interopVersion].flatMap(Int.init).map(String.init) ?? "6"
        headers[Self.uploadLimit] = "max-size=\(StorageRules.largestUpload)"
        return Response(status: .ok, headers: headers)
    }

    /// `POST /uploads/{key}`: a tus creation for `key` (the rules checked there), then the body, if any,
    /// appended as a tus `PATCH` at offset 0.
    private func create(_ request: Request, _ context: ServerContext, version: Int) async throws -> Response {
        // However this ends, a client asking about the announced id is answered from now on.
        let announcedID = request.headers[Self.announcedID]
        defer { if let announcedID { announced.settle(announcedID) } }
        guard let complete = Self.completeness(request.headers, version: version) else {
            return refuse(.badRequest, "Upload-Complete (Upload-Incomplete in interop version 3) is required", version)
        }
        let rawPath = request.head.path ?? ""
        let encodedKey = rawPath.dropFirst("/uploads/".count).split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let key = String(encodedKey).removingPercentEncoding, !key.isEmpty else {
            return refuse(.badRequest, "the path /uploads/{key} names no storage key", version)
        }
        let contentLength = Self.integer(request.headers[.contentLength])
        var length = Self.integer(request.headers[HTTPField.Name("Upload-Length")!])
        if complete, let contentLength {
            if let declared = length, declared != contentLength {
                return refuse(.badRequest, "Upload-Length \(declared) does not match the complete body's \(contentLength) bytes", version)
            }
            length = contentLength
        }
        guard let length else {
            return refuse(.badRequest, "the upload's length must be known when it is created: Upload-Length, or a complete body with Content-Length", version)
        }
        var fields = HTTPFields()
        fields[Tus.resumable] = Tus.version
        fields[Tus.uploadLength] = String(length)
        fields[Tus.uploadMetadata] = "key \(Data(key.utf8).base64EncodedString())"
        fields[.authorization] = request.headers[.authorization]
        let creation = Request(
            head: HTTPRequest(method: .post, scheme: nil, authority: request.head.authority, path: "/files", headerFields: fields),
            body: RequestBody(buffer: ByteBuffer()))
        let created = try await tus.create(creation, context, id: announcedID)
        if let announcedID { announced.settle(announcedID) }
        guard created.status == .created, let id = created.headers[.location]?.split(separator: "/").last.map(String.init) else {
            return translate(created, version)
        }
        let location = TusRoutes.url("/resumable/\(id)", publicURL: tus.publicURL, request: request.head)
        if contentLength == 0 && !complete {
            return answer(status: .created, offset: 0, complete: false, version: version, location: location)
        }
        var answered = try await appendBody(request, context, id: id, offset: 0, version: version, creation: true)
        answered.headers[.location] = location
        return answered
    }

    /// `HEAD /resumable/{id}`: the offset the server holds, and whether the upload is complete.
    private func head(_ request: Request, _ context: ServerContext, version: Int) async throws -> Response {
        await announced.waitUntilSettled(context.parameters.get("id") ?? "")
        let answered = try await tus.head(Request(head: tusRequest(request, method: .head), body: RequestBody(buffer: ByteBuffer())), context)
        guard answered.status == .ok, let offset = Self.integer(answered.headers[Tus.uploadOffset]),
            let length = Self.integer(answered.headers[Tus.uploadLength])
        else { return translate(answered, version) }
        var response = answer(status: .noContent, offset: offset, complete: offset == length, version: version)
        response.headers[HTTPField.Name("Upload-Length")!] = String(length)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `PATCH /resumable/{id}`: bytes at `Upload-Offset` (interop version 6: `Content-Type: application/partial-upload`).
    private func append(_ request: Request, _ context: ServerContext, version: Int) async throws -> Response {
        guard let offset = Self.integer(request.headers[Tus.uploadOffset]) else {
            return refuse(.badRequest, "Upload-Offset is missing or not a number", version)
        }
        if version >= 6, request.headers[.contentType]?.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces) }) != Self.partialUpload {
            return refuse(.unsupportedMediaType, "appends must be \(Self.partialUpload) (interop version 6)", version)
        }
        let id = context.parameters.get("id") ?? ""
        await announced.waitUntilSettled(id)
        return try await appendBody(request, context, id: id, offset: offset, version: version, creation: false)
    }

    /// `DELETE /resumable/{id}`: the upload and its bytes go.
    private func cancel(_ request: Request, _ context: ServerContext, version: Int) async throws -> Response {
        await announced.waitUntilSettled(context.parameters.get("id") ?? "")
        return translate(try await tus.delete(Request(head: tusRequest(request, method: .delete), body: RequestBody(buffer: ByteBuffer())), context), version)
    }

    /// The request's body appended at `offset` through the tus `PATCH`; a request that says it
    /// completes the upload must end exactly at its length.
    /// A creation answers 201 (with the upload's URL); an append 204, or 200 when it completed the upload.
    private func appendBody(
        _ request: Request, _ context: ServerContext, id: String, offset: Int64, version: Int, creation: Bool
    ) async throws -> Response {
        var patch = tusRequest(request, method: .patch)
        patch.headerFields[.contentType] = Tus.offsetContentType
        patch.headerFields[Tus.uploadOffset] = String(offset)
        let answered = try await tus.patch(Request(head: patch, body: request.body), context, id: id)
        guard answered.status == .noContent, let reached = Self.integer(answered.headers[Tus.uploadOffset]) else {
            var response = translate(answered, version)
            if answered.status == .conflict, let held = Self.integer(answered.headers[Tus.uploadOffset]) {
                setCompleteness(&response.headers, false, version: version)
                response.headers[Tus.uploadOffset] = String(held)
            }
            return response
        }
        let upload = try await tus.store.upload(id)
        let complete = upload?.state == .stored
        if Self.completeness(request.headers, version: version) == true, !complete {
            return refuse(.badRequest, "the request said it completes the upload, but the server holds \(reached) of \(upload?.length ?? 0) bytes", version)
        }
        guard complete else { return answer(status: creation ? .created : .noContent, offset: reached, complete: false, version: version) }
        // The photo is stored: where, in the body (the app shows it).
        var response = answer(status: creation ? .created : .ok, offset: reached, complete: true, version: version)
        response.headers[.contentType] = "application/json"
        let body = try JSONSerialization.data(withJSONObject: ["key": upload?.key ?? "", "url": upload?.url ?? ""], options: [.sortedKeys, .withoutEscapingSlashes])
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        return response
    }

    // MARK: - Translating

    /// The request as the tus server expects it: its version header, the caller's token.
    private func tusRequest(_ request: Request, method: HTTPRequest.Method) -> HTTPRequest {
        var fields = HTTPFields()
        fields[Tus.resumable] = Tus.version
        fields[.authorization] = request.headers[.authorization]
        return HTTPRequest(method: method, scheme: nil, authority: request.head.authority, path: request.head.path, headerFields: fields)
    }

    /// A tus answer in the draft's terms: its status and reason kept, tus's own headers replaced by the draft's.
    private func translate(_ response: Response, _ version: Int) -> Response {
        var translated = response
        for name in [Tus.resumable, Tus.versionHeader, Tus.extensionHeader, Tus.maxSize, Tus.checksumAlgorithmHeader, Tus.uploadExpires, Tus.uploadOffset] {
            translated.headers[name] = nil
        }
        translated.headers[Self.interopVersion] = String(version)
        return translated
    }

    private func answer(status: HTTPResponse.Status, offset: Int64, complete: Bool, version: Int, location: String? = nil) -> Response {
        var headers = HTTPFields()
        headers[Self.interopVersion] = String(version)
        headers[Tus.uploadOffset] = String(offset)
        setCompleteness(&headers, complete, version: version)
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers)
    }

    private func setCompleteness(_ headers: inout HTTPFields, _ complete: Bool, version: Int) {
        if version >= 5 {
            headers[Self.uploadComplete] = complete ? "?1" : "?0"
        } else {
            headers[Self.uploadIncomplete] = complete ? "?0" : "?1"
        }
    }

    private func refuse(_ status: HTTPResponse.Status, _ message: String, _ version: Int) -> Response {
        tus.metrics.refusal("protocol")
        var headers = HTTPFields()
        headers[Self.interopVersion] = String(version)
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
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

/// The ids announced in a 104 whose creation is still running (authentication, the rules, the record
/// on disk take a few milliseconds, and the client may be quicker).
final class Announcements: Sendable {
    private let pending = Mutex<Set<String>>([])

    func add(_ id: String) { pending.withLock { _ = $0.insert(id) } }

    /// The creation finished (created, or refused).
    func settle(_ id: String) { pending.withLock { _ = $0.remove(id) } }

    /// Returns once `id` is not being created any more, or after 5 s.
    func waitUntilSettled(_ id: String) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while pending.withLock({ $0.contains(id) }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
