import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PhotoPrep
import PhotoServices

/// The tus 1.0 server at `/files/`: core, creation, creation-with-upload, termination, checksum (sha1,
/// sha256) and expiration. Every request but `OPTIONS` needs a verified token; the storage rules are
/// checked at creation (path, owner or group admin, size) and ownership on every later request (anyone
/// else gets 404, as if the upload did not exist). The type is checked from the first bytes, never
/// from what the client declares. When the last byte arrives, the photo is normalised and stored
/// before the client is told it is done.
struct TusRoutes: Sendable {
    let store: any PartialUploadStore
    let authenticator: Authenticator
    let arrivals: PhotoArrivals
    let processor: ArrivalProcessor
    let metrics: ServerMetrics
    /// Unfinished uploads are removed this long after they were created.
    let expiry: TimeInterval
    /// Unfinished uploads one user may have at once (each may hold up to 10 MiB of disk).
    let maxUnfinishedPerUser: Int
    /// Set when the server is shutting down: requests stop reading at once, keep what they flushed.
    let stopping: ShutdownSignal
    /// The address clients reach the server at (behind a proxy or load balancer); nil: the request's `Host`.
    let publicURL: String?

    func register(on router: Router<ServerContext>) {
        router.on("/files", method: .options) { _, _ in options() }
        router.post("/files") { request, context in try await create(request, context) }
        router.head("/files/:id") { request, context in try await head(request, context) }
        router.patch("/files/:id") { request, context in try await patch(request, context) }
        router.delete("/files/:id") { request, context in try await delete(request, context) }
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

    /// `POST /files/`: a new upload for the key in `Upload-Metadata`, which the caller must be allowed to
    /// write; with a body (creation-with-upload), its first bytes too.
    ///
    /// `id`: the new upload's id when the server chose it already (an IETF-draft creation announced it
    /// in a 104 before the request reached here).
    func create(_ request: Request, _ context: ServerContext, id: String? = nil) async throws -> Response {
        if let refused = requireVersion(request) { return refused }
        let caller: Caller
        switch await authenticate(request, context) {
        case .success(let who): caller = who
        case .failure(let refused): return refused.response
        }
        if request.headers[Tus.uploadDeferLength] != nil {
            return refuse(.badRequest, "Upload-Defer-Length is not supported: send Upload-Length", reason: "protocol")
        }
        guard let length = Tus.number(request.headers[Tus.uploadLength]) else {
            return refuse(.badRequest, "Upload-Length is missing or not a number", reason: "protocol")
        }
        guard let metadata = Tus.metadata(request.headers[Tus.uploadMetadata]) else {
            return refuse(.badRequest, "Upload-Metadata is malformed", reason: "protocol")
        }
        guard let key = metadata["key"], !key.isEmpty else {
            return refuse(.badRequest, "Upload-Metadata has no key (the storage path, base64)", reason: "protocol")
        }
        let path: StoragePath
        do {
            path = try StoragePath(key: key)
            try await arrivals.authorize(caller: caller.id, writing: path)
        } catch {
            if case .storage = error { return refuse(.serviceUnavailable, "\(error)", reason: "storage") }
            return refuse(.forbidden, "\(error)", reason: "path")
        }
        guard length < path.sizeLimit else {
            return refuse(
                .contentTooLarge, "\(length) bytes: uploads to \(key.split(separator: "/").first ?? "") must be smaller than \(path.sizeLimit) bytes",
                reason: "size")
        }
        guard length > 0 else { return refuse(.unsupportedMediaType, "an empty upload is not a photo", reason: "type") }
        let now = Date()
        let unfinished: Int
        do { unfinished = try await store.unfinished(now: now).filter { $0.owner == caller.id }.count } catch { return refusal(error) }
        guard unfinished < maxUnfinishedPerUser else {
            return refuse(
                .tooManyRequests, "\(caller.id) has \(unfinished) unfinished uploads; finish or delete one first (at most \(maxUnfinishedPerUser))",
                reason: "quota")
        }
        var upload = TusUpload(
            id: id ?? TusUpload.newID(), owner: caller.id, ownerName: caller.displayName, key: key, length: length, metadata: metadata,
            createdAt: now, expiresAt: now.addingTimeInterval(expiry), state: .receiving, url: nil)
        do { try await store.create(upload) } catch { return refuse(.internalServerError, "\(error)", reason: "storage") }
        metrics.uploadsInProgress.increment()

        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[.location] = location(of: upload.id, request: request)
        headers[Tus.uploadExpires] = Tus.httpDate(upload.expiresAt)
        guard request.headers[.contentType] == Tus.offsetContentType else {
            return Response(status: .created, headers: headers)
        }
        guard store.lock(upload.id) else { return refuse(Self.locked, "the upload is busy", reason: "locked") }
        defer { store.unlock(upload.id) }
        let checksum: Tus.Checksum?
        switch parseChecksum(request) {
        case .success(let parsed): checksum = parsed
        case .failure(let refused): return refused.response
        }
        switch try await receive(&upload, at: 0, request, context, checksum: checksum) {
        case .accepted(let offset):
            headers[Tus.uploadOffset] = String(offset)
            return Response(status: .created, headers: headers)
        case .refused(var response):
            // The upload may still exist (a checksum mismatch, storage unavailable): say where, so the
            // client can resume it.
            // Only an upload known to be gone goes without (a failing store may still hold it: a HEAD tells).
            let gone = (try? await store.upload(upload.id)) == .some(nil)
            if !gone { response.headers[.location] = headers[.location] }
            return response
        }
    }

    /// `HEAD /files/{id}`: how many bytes the server holds (all of them once the photo is stored).
    func head(_ request: Request, _ context: ServerContext, id: String? = nil) async throws -> Response {
        if let refused = requireVersion(request) { return refused }
        var upload: TusUpload
        switch await owned(request, context, id: id) {
        case .success(let found): upload = found
        case .failure(let refused): return refused.response
        }
        let offset: Int64, durable: Int64
        do { durable = try await store.offset(upload.id) } catch { return refusal(error) }
        switch UploadLifecycle.query(upload, caller: upload.owner, held: durable, now: Date()) {
        case .answer(let held):
            offset = held
        case .finish:
            // Every byte arrived but the photo was not stored (the server stopped in between): finish now.
            guard store.lock(upload.id) else { return refuse(Self.locked, "the upload is busy", reason: "locked") }
            defer { store.unlock(upload.id) }
            if case .refused(let response) = await finish(&upload) { return response }
            offset = upload.length
        case .notFound, .conflict, .receive:
            return refuse(.notFound, "no such upload", reason: "unknown")
        }
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[Tus.uploadOffset] = String(offset)
        headers[Tus.uploadLength] = String(upload.length)
        headers[.cacheControl] = "no-store"
        if upload.state == .receiving { headers[Tus.uploadExpires] = Tus.httpDate(upload.expiresAt) }
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH /files/{id}`: bytes at `Upload-Offset`, which must be what the server holds.
    func patch(_ request: Request, _ context: ServerContext, id: String? = nil) async throws -> Response {
        if let refused = requireVersion(request) { return refused }
        var upload: TusUpload
        switch await owned(request, context, id: id) {
        case .success(let found): upload = found
        case .failure(let refused): return refused.response
        }
        guard request.headers[.contentType] == Tus.offsetContentType else {
            return refuse(.unsupportedMediaType, "PATCH bodies must be \(Tus.offsetContentType)", reason: "protocol")
        }
        guard let claimed = Tus.number(request.headers[Tus.uploadOffset]) else {
            return refuse(.badRequest, "Upload-Offset is missing or not a number", reason: "protocol")
        }
        let checksum: Tus.Checksum?
        switch parseChecksum(request) {
        case .success(let parsed): checksum = parsed
        case .failure(let refused): return refused.response
        }
        guard store.lock(upload.id) else {
            return refuse(Self.locked, "another request is writing to this upload", reason: "locked")
        }
        defer { store.unlock(upload.id) }
        // Read again under the lock: the request that held it may have finished the upload.
        let current: TusUpload?, durable: Int64
        do throws(UploadStoreFailure) {
            current = try await store.upload(upload.id)
            durable = try await store.offset(upload.id)
        } catch {
            return refusal(error)
        }
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        let offset: Int64
        switch UploadLifecycle.append(current, caller: upload.owner, held: durable, claimed: claimed, now: Date()) {
        case .notFound, .finish:
            return refuse(.notFound, "no such upload", reason: "unknown")
        case .conflict(let held):
            var refused = refuse(.conflict, "Upload-Offset is \(claimed) but the server holds \(held) bytes", reason: "offset")
            refused.headers[Tus.uploadOffset] = String(held)
            return refused
        case .answer(let held):
            headers[Tus.uploadOffset] = String(held)
            return Response(status: .noContent, headers: headers)
        case .receive(let from):
            guard let current else { return refuse(.notFound, "no such upload", reason: "unknown") }
            offset = from
            upload = current
        }
        switch try await receive(&upload, at: offset, request, context, checksum: checksum) {
        case .accepted(let newOffset):
            headers[Tus.uploadOffset] = String(newOffset)
            if upload.state == .receiving { headers[Tus.uploadExpires] = Tus.httpDate(upload.expiresAt) }
            return Response(status: .noContent, headers: headers)
        case .refused(let response):
            return response
        }
    }

    /// `DELETE /files/{id}` (termination): the upload and its bytes go.
    func delete(_ request: Request, _ context: ServerContext, id: String? = nil) async throws -> Response {
        if let refused = requireVersion(request) { return refused }
        let upload: TusUpload
        switch await owned(request, context, id: id) {
        case .success(let found): upload = found
        case .failure(let refused): return refused.response
        }
        guard store.lock(upload.id) else { return refuse(Self.locked, "another request is writing to this upload", reason: "locked") }
        defer { store.unlock(upload.id) }
        do throws(UploadStoreFailure) {
            guard try await store.delete(upload.id) else {
                return refuse(Self.locked, "another server is finishing this upload; ask again in a moment", reason: "locked")
            }
        } catch {
            return refusal(error)
        }
        if upload.state == .receiving { metrics.uploadsInProgress.decrement() }
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        return Response(status: .noContent, headers: headers)
    }

    // MARK: - Receiving bytes

    enum Received {
        case accepted(offset: Int64)
        case refused(Response)
    }

    /// Streams the request body to the end of the upload's file, never holding more than one buffer,
    /// and acknowledges (returns the new offset) only after `fsync`. The first bytes must sniff as JPEG
    /// or PNG (else the upload is deleted: 415); a body longer than the upload, or one whose checksum
    /// does not match, is cut back to where it started. The last byte triggers `finish`.
    private func receive(
        _ upload: inout TusUpload, at offset: Int64, _ request: Request, _ context: ServerContext, checksum: Tus.Checksum?
    ) async throws -> Received {
        // 16 bytes: enough to recognise every format (a HEIF by its major brand), and to name what else it is (GIF, TIFF …).
        let sniffLength = Int(min(16, upload.length))
        let known: [UInt8], appender: any UploadAppender
        do throws(UploadStoreFailure) {
            known = offset > 0 && offset < sniffLength ? try await store.head(upload.id, count: Int(offset)) : []
            appender = try await store.appender(upload.id, at: offset, wholeRequest: checksum != nil)
        } catch {
            return .refused(refusal(error))
        }
        let reading = BodyReading(
            upload: upload, remaining: upload.length - offset, sniffLength: sniffLength, head: known, sniffed: offset >= sniffLength,
            hasher: checksum?.hasher())
        // The body is read in a child task raced against shutdown: a stopping server does not wait for a
        // slow client, it keeps what arrived (flushed) and says how much, and the client resumes there.
        let read = await withTaskGroup(of: BodyReading.Outcome?.self) { group in
            group.addTask { await self.read(request.body, into: appender, reading, context) }
            group.addTask {
                await self.stopping.wait()
                return nil
            }
            var outcome: BodyReading.Outcome = .stopped(hash: nil)
            for await result in group {
                group.cancelAll()
                if let result { outcome = result }
            }
            return outcome
        }
        var stopped = false
        var head = reading.head, sniffed = reading.sniffed
        switch read {
        case .refused(let response):
            return .refused(response)
        case .failed(let error):
            // The client went away: keep what arrived, flushed, for a resume.
            try? await appender.sync()
            throw error
        case .stopped:
            stopped = true
            if checksum != nil { await appender.rollback() }  // the checksum covers the whole body: nothing verified
        case .complete(let hash, let received, let done):
            head = received
            sniffed = done
            if let checksum, hash != checksum.digest {
                await appender.rollback()
                return .refused(refuse(Tus.checksumMismatch, "the body's \(checksum.algorithm.rawValue) checksum does not match Upload-Checksum", reason: "checksum"))
            }
        }
        do { try await appender.sync() } catch { return .refused(refusal(error)) }
        let newOffset = offset + appender.count
        if !sniffed, newOffset == upload.length, let refused = await refuseUnlessPhoto(head, upload) { return .refused(refused) }
        if UploadLifecycle.received(upload, offset: newOffset, stopping: stopped) == .finish, case .refused(let response) = await finish(&upload) {
            return .refused(response)
        }
        return .accepted(offset: newOffset)
    }

    /// What one request body's reading starts from.
    struct BodyReading: Sendable {
        enum Outcome: Sendable {
            /// The body ended: its hash (when a checksum was sent), the first bytes of the upload, whether they were sniffed.
            case complete(hash: [UInt8]?, head: [UInt8], sniffed: Bool)
            case refused(Response)
            case failed(any Error)
            /// The server is stopping.
            case stopped(hash: [UInt8]?)
        }

        var upload: TusUpload
        var remaining: Int64
        var sniffLength: Int
        var head: [UInt8]
        var sniffed: Bool
        var hasher: Tus.Hasher?
    }

    /// Appends the body's buffers one at a time; refuses a body longer than the upload, and (deleting
    /// the upload) one whose first bytes are not a photo the pipeline decodes (`ImageFormat.sniff`).
    private func read(_ body: RequestBody, into appender: any UploadAppender, _ start: BodyReading, _ context: ServerContext) async -> BodyReading.Outcome {
        var state = start
        do {
            for try await buffer in body {
                if Task.isCancelled { return .stopped(hash: nil) }
                guard appender.count + Int64(buffer.readableBytes) <= state.remaining else {
                    await appender.rollback()
                    return .refused(refuse(.contentTooLarge, "the body goes past Upload-Length (\(state.upload.length) bytes)", reason: "size"))
                }
                buffer.withUnsafeReadableBytes { bytes in
                    state.hasher?.update(bytes)
                    if !state.sniffed { state.head += bytes.prefix(state.sniffLength - state.head.count) }
                }
                if !state.sniffed, state.head.count >= state.sniffLength {
                    state.sniffed = true
                    if let refused = await refuseUnlessPhoto(state.head, state.upload) { return .refused(refused) }
                }
                do { try await appender.write(buffer) } catch { return .refused(refusal(error)) }
                metrics.bytesReceived.increment(by: Int64(buffer.readableBytes))
                context.log.received(buffer.readableBytes)
            }
        } catch {
            return Task.isCancelled ? .stopped(hash: nil) : .failed(error)
        }
        if Task.isCancelled { return .stopped(hash: nil) }
        return .complete(hash: state.hasher?.finalize(), head: state.head, sniffed: state.sniffed)
    }

    /// 415, and the upload deleted, unless `head` starts a JPEG, PNG, HEIC/HEIF, AVIF or WebP.
    private func refuseUnlessPhoto(_ head: [UInt8], _ upload: TusUpload) async -> Response? {
        do {
            _ = try ImageFormat.sniff(head)
            return nil
        } catch {
            await discard(upload)
            return refuse(.unsupportedMediaType, "\(upload.key): \(error.message)", reason: "type")
        }
    }

    /// All bytes are here: normalise, store and record the photo (see `ArrivalProcessor`), unless another
    /// request or instance is doing it right now (423: the client asks again).
    func finish(_ upload: inout TusUpload) async -> Received {
        let processor = self.processor, arriving = upload
        let outcome = await store.finishing(upload) { file in
            do throws(ArrivalProcessor.Refusal) { return .success(try await processor.finish(arriving, file: file)) } catch { return .failure(error) }
        }
        switch outcome {
        case nil:
            return .refused(refuse(Self.locked, "the upload is being finished", reason: "locked"))
        case .success(let url):
            upload.state = .stored
            upload.url = url
            metrics.uploadsInProgress.decrement()
            return .accepted(offset: upload.length)
        case .failure(let error):
            switch error.kind {
            case .unavailable:
                var response = refuse(.serviceUnavailable, "\(upload.key): \(error.description)", reason: "storage")
                response.headers[.retryAfter] = "5"
                return .refused(response)
            case .unprocessable:
                metrics.uploadsInProgress.decrement()
                return .refused(refuse(.unprocessableContent, "\(upload.key): \(error.description)", reason: "photo"))
            case .notAllowed:
                metrics.uploadsInProgress.decrement()
                return .refused(refuse(.forbidden, "\(upload.key): \(error.description)", reason: "path"))
            }
        }
    }

    /// What a failing store answers: 409 when another request wrote first (with what the server holds
    /// now), 400 for an upload in too many pieces, else 500.
    private func refusal(_ failure: UploadStoreFailure) -> Response {
        switch failure.kind {
        case .storage: return refuse(.internalServerError, failure.description, reason: "storage")
        case .conflict: return refuse(.conflict, failure.description, reason: "offset")
        case .tooManyPieces: return refuse(.badRequest, failure.description, reason: "protocol")
        }
    }

    private func discard(_ upload: TusUpload) async {
        _ = try? await store.delete(upload.id)
        metrics.uploadsInProgress.decrement()
    }

    // MARK: - Checks

    private func requireVersion(_ request: Request) -> Response? {
        guard request.headers[Tus.resumable] == Tus.version else {
            var response = refuse(.preconditionFailed, "Tus-Resumable: \(Tus.version) is required", reason: "protocol")
            response.headers[Tus.versionHeader] = Tus.version
            return response
        }
        return nil
    }

    private func authenticate(_ request: Request, _ context: ServerContext) async -> Result<Caller, Refused> {
        do {
            let caller = try await authenticator.caller(authorization: request.headers[.authorization])
            context.log.authenticated(caller.id)
            return .success(caller)
        } catch {
            context.logger.info("not authenticated", metadata: ["reason": "\(error.description)"])
            var response = refuse(.unauthorized, "not authenticated: \(error.description)", reason: "auth")
            response.headers[.wwwAuthenticate] = "Bearer"
            return .failure(Refused(response: response))
        }
    }

    /// The upload the URL names, if the caller owns it and it has not expired; 404 for anything else,
    /// so that nobody learns another user's upload exists.
    private func owned(_ request: Request, _ context: ServerContext, id: String?) async -> Result<TusUpload, Refused> {
        let caller: Caller
        switch await authenticate(request, context) {
        case .success(let who): caller = who
        case .failure(let refused): return .failure(refused)
        }
        guard let id = id ?? context.parameters.get("id") else {
            return .failure(Refused(response: refuse(.notFound, "no such upload", reason: "unknown")))
        }
        let found: TusUpload?
        do { found = try await store.upload(id) } catch { return .failure(Refused(response: refusal(error))) }
        guard let upload = UploadLifecycle.visible(found, to: caller.id, now: Date()) else {
            return .failure(Refused(response: refuse(.notFound, "no such upload", reason: "unknown")))
        }
        return .success(upload)
    }

    private func parseChecksum(_ request: Request) -> Result<Tus.Checksum?, Refused> {
        do {
            return .success(try Tus.Checksum.parse(request.headers[Tus.uploadChecksum]))
        } catch {
            switch error {
            case .malformed: return .failure(Refused(response: refuse(.badRequest, "Upload-Checksum is malformed", reason: "protocol")))
            case .unsupported(let name):
                return .failure(Refused(response: refuse(.badRequest, "checksum algorithm \(name) is not supported (\(Tus.checksumAlgorithms))", reason: "protocol")))
            }
        }
    }

    /// The new upload's URL: under the configured public URL, else built from the request's own `Host`
    /// (the client comes back through the same front door); relative when there is neither.
    private func location(of id: String, request: Request) -> String {
        Self.url("/files/\(id)", publicURL: publicURL, request: request.head)
    }

    /// `path` on the address clients reach the server at: `publicURL`, else the request's `Host`.
    static func url(_ path: String, publicURL: String?, request: HTTPRequest) -> String {
        if let publicURL { return publicURL + path }
        guard let host = request.authority, !host.contains("/"), !host.contains("@") else { return path }
        return "http://\(host)\(path)"
    }

    static let locked = HTTPResponse.Status(code: 423, reasonPhrase: "Locked")

    struct Refused: Error {
        var response: Response
    }

    /// An error answer with the reason in a plain-text body, counted in the refusals metric.
    private func refuse(_ status: HTTPResponse.Status, _ message: String, reason: String) -> Response {
        metrics.refusal(reason)
        var headers = HTTPFields()
        headers[Tus.resumable] = Tus.version
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}
