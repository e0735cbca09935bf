import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotoPrep
import PhotoServices

/// The resumable-upload core both protocols share, shaped like tusd's handler over its data store and
/// locker: create, append at an offset, ask the offset, terminate, one writer per upload, the type
/// sniffed from the first bytes, and — when the last byte arrives — the photo handed to its intake
/// (`ArrivalProcessor`) before the client is told it is done. tus 1.0 (`TusRoutes`) and the IETF draft
/// (`ResumableUploadRoutes`) are dialects: they read their headers, call these methods with the caller
/// their authentication found, and turn the outcome or the `UploadRefusal` into their own answer.
///
/// The storage rules are checked at creation (path, owner or group admin, size); ownership on every
/// later call (anyone else gets "no such upload", as if it did not exist).
struct UploadHandler: Sendable {
    let store: any PartialUploadStore
    let processor: ArrivalProcessor
    let metrics: ServerMetrics
    /// Unfinished uploads are removed this long after they were created.
    let expiry: TimeInterval
    /// Unfinished uploads one user may have at once (each may hold up to 10 MiB of disk).
    let maxUnfinishedPerUser: Int
    /// Set when the server is shutting down: requests stop reading at once, keep what they flushed.
    let stopping: ShutdownSignal
    /// How slowly a body may arrive before the request is cut (408, what arrived kept).
    var pace = BodyPace()
    /// How long finishing may take once the last byte arrived (503 with `Retry-After` after it, the bytes kept).
    var finishing = FinishDeadline(bound: .seconds(30))
    /// Where a failure of the database or the storage is reported in full (the client gets no paths).
    var logger = Logger(label: "photoprep.uploads")

    /// 16 bytes: enough to recognise every format (a HEIF by its major brand), and to name what else it is (GIF, TIFF …).
    static let sniffLength = 16

    // MARK: - Calls

    /// A new upload of `length` bytes of the photo for `key`, which `caller` must be allowed to write.
    func create(caller: Caller, key: String, length: Int64, metadata: [String: String] = [:]) async throws(UploadRefusal) -> TusUpload {
        let path: StoragePath
        do {
            path = try StoragePath(key: key)
            try await processor.intake.authorize(caller: caller.id, writing: path)
        } catch {
            if let failure = DependencyFailure(error) { throw refusal(failure) }
            throw refusal(.forbidden, "\(error)", reason: "path")
        }
        guard length < path.sizeLimit else {
            throw refusal(
                .contentTooLarge, "\(length) bytes: uploads to \(key.split(separator: "/").first ?? "") must be smaller than \(path.sizeLimit) bytes",
                reason: "size")
        }
        guard length > 0 else { throw refusal(.unsupportedMediaType, "an empty upload is not a photo", reason: "type") }
        if let focus = metadata["focus"], FocalPoint(parsing: focus) == nil {
            throw refusal(.unprocessableContent, "focus: \(FocalPoint.expected)", reason: "focus")
        }
        let now = Date()
        let unfinished: Int
        do { unfinished = try await store.unfinished(now: now).filter { $0.owner == caller.id }.count } catch { throw refusal(error) }
        guard unfinished < maxUnfinishedPerUser else {
            throw refusal(
                .tooManyRequests, "\(caller.id) has \(unfinished) unfinished uploads; finish or delete one first (at most \(maxUnfinishedPerUser))",
                reason: "quota")
        }
        var upload = TusUpload(
            id: TusUpload.newID(), owner: caller.id, ownerName: caller.displayName, key: key, length: length, metadata: metadata,
            createdAt: now, expiresAt: now.addingTimeInterval(expiry), state: .receiving)
        upload.metadata["key"] = key
        do { try await store.create(upload) } catch { throw refusal(error) }
        metrics.uploadsInProgress.increment()
        return upload
    }

    /// How many bytes the server holds of `caller`'s upload `id` (all of them once the photo is stored).
    /// An upload that holds every byte but was never stored (the server stopped in between) is finished now.
    func offset(of id: String, caller: Caller) async throws(UploadRefusal) -> (upload: TusUpload, offset: Int64) {
        var upload = try await owned(id, by: caller)
        let durable: Int64
        do { durable = try await store.offset(upload.id) } catch { throw refusal(error) }
        switch UploadLifecycle.query(upload, caller: upload.owner, held: durable, now: Date()) {
        case .answer(let held):
            if upload.state == .receiving, held > 0, try await lost(upload) { throw Self.gone(metrics) }
            return (upload, held)
        case .finish:
            guard store.lock(upload.id) else { throw refusal(Self.locked, "the upload is busy", reason: "locked") }
            defer { store.unlock(upload.id) }
            try await finish(&upload)
            return (upload, upload.length)
        case .notFound, .conflict, .receive:
            throw Self.noSuchUpload(metrics)
        }
    }

    /// Appends `request`'s body to `caller`'s upload `id` at `claimed`, which must be what the server holds, and
    /// returns the upload and its new offset, acknowledged only once durable (after `fsync`). The last
    /// byte finishes it: `upload.state` is then `.stored`. Throws `UploadRefusal`, or the body's own
    /// error when the client went away (what arrived is kept, flushed, for a resume).
    /// A body declaring more bytes (`Content-Length`) than the upload has left is refused (413) before any
    /// of it is read.
    /// `statedLength`: the length the request says the upload has (the draft lets an append say it again; -1 when it is
    /// not a number), refused (400) before any of the body is read unless it is the upload's.
    func append(
        to id: String, caller: Caller, at claimed: Int64, request: Request, checksum: Tus.Checksum?, log: RequestLogEntry, statedLength: Int64? = nil
    ) async throws -> (upload: TusUpload, offset: Int64) {
        let visible = try await owned(id, by: caller)
        guard store.lock(visible.id) else { throw refusal(Self.locked, "another request is writing to this upload", reason: "locked") }
        defer { store.unlock(visible.id) }
        // Read again under the lock: the request that held it may have finished the upload.
        let current: TusUpload?, durable: Int64
        do throws(UploadStoreFailure) {
            current = try await store.upload(visible.id)
            durable = try await store.offset(visible.id)
        } catch {
            throw refusal(error)
        }
        if let statedLength, let current, statedLength != current.length {
            throw refusal(.badRequest, "Upload-Length is not the upload's length, \(current.length) bytes", reason: "protocol")
        }
        switch UploadLifecycle.append(current, caller: caller.id, held: durable, claimed: claimed, now: Date()) {
        case .notFound, .finish:
            throw Self.noSuchUpload(metrics)
        case .conflict(let held):
            var refused = refusal(.conflict, "Upload-Offset is \(claimed) but the server holds \(held) bytes", reason: "offset")
            refused.held = held
            throw refused
        case .answer(let held):
            // The upload is stored: a body has nowhere to go, and is refused before a byte of it is read (else a client
            // could stream gigabytes into a finished upload, every one read and dropped). An empty one asks the offset.
            let declared = Tus.number(request.headers[.contentLength])
            if declared.map({ $0 > 0 }) ?? (request.headers[.transferEncoding] != nil) {
                var refused = refusal(.contentTooLarge, "the upload is complete: no byte fits after its \(held) bytes", reason: "size")
                refused.held = held
                throw refused
            }
            return (current ?? visible, held)
        case .receive(let from):
            guard var upload = current else { throw Self.noSuchUpload(metrics) }
            if let declared = Tus.number(request.headers[.contentLength]), declared > upload.length - from {
                throw refusal(
                    .contentTooLarge, "the body's \(declared) bytes do not fit: \(upload.length - from) of the upload's \(upload.length) are left",
                    reason: "size")
            }
            // A client waiting for a go-ahead before its body (`Expect: 100-continue`: curl's default for large bodies)
            // gets it now that the request is accepted; without it, each upload stalled until the client gave up waiting.
            if request.headers[.expect]?.lowercased() == "100-continue" {
                try? await CurrentConnection.sendInterim(HTTPResponse(status: .continue))
            }
            let offset = try await receive(&upload, at: from, request.body, checksum: checksum, log: log)
            return (upload, offset)
        }
    }

    /// Removes `caller`'s upload `id` and its bytes — unless another instance is finishing it (423).
    func terminate(_ id: String, caller: Caller) async throws(UploadRefusal) {
        let upload = try await owned(id, by: caller)
        guard store.lock(upload.id) else { throw refusal(Self.locked, "another request is writing to this upload", reason: "locked") }
        defer { store.unlock(upload.id) }
        let deleted: Bool
        do { deleted = try await store.delete(upload.id) } catch { throw refusal(error) }
        guard deleted else { throw refusal(Self.locked, "another server is finishing this upload; ask again in a moment", reason: "locked") }
        if upload.state == .receiving { metrics.uploadsInProgress.decrement() }
    }

    /// Whether the upload is known to be gone (a failing store may still hold it: then false).
    func isGone(_ id: String) async -> Bool {
        (try? await store.upload(id)) == .some(nil)
    }

    /// All bytes are here: the photo normalised, stored and recorded (`ArrivalProcessor`), unless another
    /// request or instance is doing it right now (423: the client asks again).
    func finish(_ upload: inout TusUpload) async throws(UploadRefusal) {
        let processor = self.processor, arriving = upload
        let outcome = await store.finishing(upload, within: finishing) { file in
            do throws(ArrivalProcessor.Refusal) { return .success(try await processor.finish(arriving, file: file)) } catch { return .failure(error) }
        }
        switch outcome {
        case nil:
            throw refusal(Self.locked, "the upload is being finished", reason: "locked")
        case .success:
            upload.state = .stored
            metrics.uploadsInProgress.decrement()
        case .failure(let error):
            switch error.kind {
            case .unavailable:
                throw refusal(DependencyFailure(.unavailable, detail: "\(upload.key): \(error.description)"))
            case .full:
                throw refusal(DependencyFailure(.full, detail: "\(upload.key): \(error.description)"))
            case .gone:
                ended(upload, detail: error.description)
                throw Self.gone(metrics)
            case .busy:
                throw refusal(.serviceUnavailable, "\(upload.key): \(error.description)", reason: "busy")
            case .unprocessable:
                metrics.uploadsInProgress.decrement()
                throw refusal(.unprocessableContent, "\(upload.key): \(error.description)", reason: "photo")
            case .notAllowed:
                metrics.uploadsInProgress.decrement()
                throw refusal(.forbidden, "\(upload.key): \(error.description)", reason: "path")
            }
        }
    }

    // MARK: - Refusals

    /// The upload `id` if `caller` owns it and it has not expired; "no such upload" for anything else,
    /// so that nobody learns another user's upload exists.
    private func owned(_ id: String, by caller: Caller) async throws(UploadRefusal) -> TusUpload {
        let found: TusUpload?
        do { found = try await store.upload(id) } catch { throw refusal(error) }
        guard let upload = UploadLifecycle.visible(found, to: caller.id, now: Date()) else { throw Self.noSuchUpload(metrics) }
        return upload
    }

    static let locked = HTTPResponse.Status(code: 423, reasonPhrase: "Locked")

    /// The upload has ended because bytes the server acknowledged are gone: start a new one (tus and the draft: 410).
    static func gone(_ metrics: ServerMetrics) -> UploadRefusal {
        metrics.refusal("gone")
        return UploadRefusal(status: .gone, description: "bytes of this upload are no longer on the server: start a new upload", reason: "gone")
    }

    /// Whether bytes of `upload` the server acknowledged are gone; when they are, the upload is ended (deleted) —
    /// unless it finished meanwhile (its pieces freed by the finishing), which is not a loss.
    private func lost(_ upload: TusUpload) async throws(UploadRefusal) -> Bool {
        let lost: Bool
        do { lost = try await store.lostBytes(upload.id) } catch { throw refusal(error) }
        guard lost, let again = try? await store.upload(upload.id), again.state == .receiving else { return false }
        guard (try? await store.delete(upload.id)) == true else { return false }
        ended(upload, detail: "a piece the store listed is not in the bucket")
        return true
    }

    /// An upload ended because its bytes are gone: no longer in progress, and said in the error log.
    private func ended(_ upload: TusUpload, detail: String) {
        metrics.uploadsInProgress.decrement()
        logger.error("an upload's bytes are gone from its store: ended", metadata: ["upload": "\(upload.id)", "detail": "\(detail)"])
    }

    static func noSuchUpload(_ metrics: ServerMetrics) -> UploadRefusal {
        metrics.refusal("unknown")
        return UploadRefusal(status: .notFound, description: "no such upload", reason: "unknown")
    }

    /// What a failing store answers: 409 when another request wrote first, 400 for an upload in too
    /// many pieces, 410 for acknowledged bytes that are gone, else the database's or the storage's failure (503,
    /// 507 when full).
    func refusal(_ failure: UploadStoreFailure) -> UploadRefusal {
        switch failure.kind {
        case .storage, .full: refusal(DependencyFailure(failure))
        case .gone: Self.gone(metrics)
        case .conflict: refusal(.conflict, failure.description, reason: "offset")
        case .tooManyPieces: refusal(.badRequest, failure.description, reason: "protocol")
        }
    }

    /// The database's or the storage's failure, reported (logged in full, counted) and refused as every route
    /// refuses one: 503 or 507 with `Retry-After`, and a message without the detail.
    func refusal(_ failure: DependencyFailure) -> UploadRefusal {
        failure.report(logger, metrics)
        return refusal(failure.status, failure.description, reason: "storage")
    }

    /// A refusal, counted in the refusals metric under `reason`. Every 429 and 503 says when to try again
    /// (`Retry-After`): a minute for a quota (an upload must finish or expire first) or a full storage, five
    /// seconds for storage that did not answer.
    func refusal(_ status: HTTPResponse.Status, _ message: String, reason: String) -> UploadRefusal {
        metrics.refusal(reason)
        var refused = UploadRefusal(status: status, description: message, reason: reason)
        refused.retryAfter = Problem.retryAfter(status)
        return refused
    }
}
