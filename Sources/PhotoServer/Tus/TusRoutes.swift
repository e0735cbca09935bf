import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoServices

/// tus 1.0 at `/files/`: core, creation, creation-with-upload, termination, checksum (sha1, sha256) and
/// expiration — a dialect of the upload core (`UploadHandler`): each request's headers are read here,
/// the core does the work, and its answer or refusal goes back in tus' headers. Every request but
/// `OPTIONS` needs `Tus-Resumable: 1.0.0` and a verified token (`BearerAuthentication`).
struct TusRoutes: Sendable {
    let uploads: UploadHandler
    /// The address clients reach the server at, for upload locations.
    let address: PublicAddress

    func register(on router: some RouterMethods<ServerContext>) {
        router.on("/files", method: .options) { _, _ in options() }
        router.post("/files") { request, context in try await answer(request, context) { try await create(request, context, caller: $0) } }
        router.head("/files/:id") { request, context in try await answer(request, context) { try await head(request, context, caller: $0) } }
        router.patch("/files/:id") { request, context in try await answer(request, context) { try await patch(request, context, caller: $0) } }
        router.delete("/files/:id") { request, context in try await answer(request, context) { try await delete(request, context, caller: $0) } }
    }

    // MARK: - Requests

    private func options() -> Response {
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[Tus.versionHeader] = Tus.version
        headers[Tus.extensionHeader] = Tus.extensions
        headers[Tus.maxSize] = String(StorageRules.largestUpload)
        headers[Tus.checksumAlgorithmHeader] = Tus.checksumAlgorithms
        return Response(status: .noContent, headers: headers)
    }

    /// `POST /files/`: a new upload for the key in `Upload-Metadata`; with a body (creation-with-upload),
    /// its first bytes too.
    private func create(_ request: Request, _ context: ServerContext, caller: Caller) async throws -> Response {
        if request.headers[Tus.uploadDeferLength] != nil {
            throw protocolError("Upload-Defer-Length is not supported: send Upload-Length")
        }
        guard let length = Tus.number(request.headers[Tus.uploadLength]) else {
            if Tus.isHugeNumber(request.headers[Tus.uploadLength]) { throw UploadRefusal.lengthTooLong }
            throw protocolError("Upload-Length is missing or not a number")
        }
        guard let metadata = Tus.metadata(request.headers[Tus.uploadMetadata]) else { throw protocolError("Upload-Metadata is malformed") }
        guard let key = metadata["key"], !key.isEmpty else { throw protocolError("Upload-Metadata has no key (the storage path, base64)") }
        let checksum = try parseChecksum(request)
        let upload = try await uploads.create(caller: caller, key: key, length: length, metadata: metadata)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[.location] = address.url("/files/\(upload.id)", request: request.head)
        headers[Tus.uploadExpires] = HTTPDate.format(upload.expiresAt)
        guard request.headers[.contentType] == Tus.offsetContentType else { return Response(status: .created, headers: headers) }
        do {
            let (_, offset) = try await uploads.append(to: upload.id, caller: caller, at: 0, body: UploadBody(request), checksum: checksum, log: context.log)
            headers[Tus.uploadOffset] = String(offset)
            return Response(status: .created, headers: headers)
        } catch let refused as UploadRefusal {
            // The upload may still exist (a checksum mismatch, storage unavailable): say where, so that the
            // client can resume it. Only an upload known to be gone goes without.
            var response = response(refused)
            if await !uploads.isGone(upload.id) { response.headers[.location] = headers[.location] }
            return response
        }
    }

    /// `HEAD /files/{id}`: how many bytes the server holds (all of them once the photo is stored).
    private func head(_ request: Request, _ context: ServerContext, caller: Caller) async throws -> Response {
        let (upload, offset) = try await uploads.offset(of: context.parameters.get("id") ?? "", caller: caller)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[Tus.uploadOffset] = String(offset)
        headers[Tus.uploadLength] = String(upload.length)
        headers[.cacheControl] = "no-store"
        if upload.state == .receiving { headers[Tus.uploadExpires] = HTTPDate.format(upload.expiresAt) }
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH /files/{id}`: bytes at `Upload-Offset`, which must be what the server holds.
    private func patch(_ request: Request, _ context: ServerContext, caller: Caller) async throws -> Response {
        guard request.headers[.contentType] == Tus.offsetContentType else {
            throw UploadRefusal(.wrongBodyType, "PATCH bodies must be \(Tus.offsetContentType)")
        }
        guard let claimed = Tus.number(request.headers[Tus.uploadOffset]) else { throw protocolError("Upload-Offset is missing or not a number") }
        let checksum = try parseChecksum(request)
        let (upload, offset) = try await uploads.append(
            to: context.parameters.get("id") ?? "", caller: caller, at: claimed, body: UploadBody(request), checksum: checksum, log: context.log)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[Tus.uploadOffset] = String(offset)
        if upload.state == .receiving { headers[Tus.uploadExpires] = HTTPDate.format(upload.expiresAt) }
        return Response(status: .noContent, headers: headers)
    }

    /// `DELETE /files/{id}` (termination): the upload and its bytes go.
    private func delete(_ request: Request, _ context: ServerContext, caller: Caller) async throws -> Response {
        try await uploads.terminate(context.parameters.get("id") ?? "", caller: caller)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        return Response(status: .noContent, headers: headers)
    }

    // MARK: - Plumbing

    /// Checks the protocol version and the token, runs `handle`, and answers a refusal in tus' terms.
    private func answer(_ request: Request, _ context: ServerContext, _ handle: (Caller) async throws -> Response) async throws -> Response {
        guard request.headers[Tus.resumable] == Tus.version else {
            var response = response(UploadRefusal(.versionRequired, "Tus-Resumable: \(Tus.version) is required"))
            response.headers[Tus.versionHeader] = Tus.version
            return response
        }
        let caller: Caller
        switch context.identity {
        case .success(let who): caller = who
        case .failure(let error): return response(UploadRefusal(.notAuthenticated, "not authenticated: \(error.description)"))
        }
        do {
            return try await handle(caller)
        } catch let refused as UploadRefusal {
            return response(refused)
        }
    }

    private func parseChecksum(_ request: Request) throws(UploadRefusal) -> Tus.Checksum? {
        do {
            return try Tus.Checksum.parse(request.headers[Tus.uploadChecksum])
        } catch {
            switch error {
            case .malformed: throw protocolError("Upload-Checksum is malformed")
            case .unsupported(let name): throw protocolError("checksum algorithm \(name) is not supported (\(Tus.checksumAlgorithms))")
            }
        }
    }

    private func protocolError(_ message: String) -> UploadRefusal {
        UploadRefusal(.malformed, message)
    }

    /// A refusal in tus' terms, counted: its status, the reason in a plain-text body, what the server holds after a 409.
    private func response(_ refused: UploadRefusal) -> Response {
        uploads.metrics.refusal(refused.reason)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[.contentType] = "text/plain; charset=utf-8"
        if let held = refused.held { headers[Tus.uploadOffset] = String(held) }
        if let seconds = refused.retryAfter { headers[.retryAfter] = String(seconds) }
        if refused.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: refused.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: refused.description + "\n")))
    }
}
