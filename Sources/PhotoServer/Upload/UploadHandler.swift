import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import PhotoPrep
import PhotoServices

/// The resumable-upload core both protocols share, shaped like tusd's handler over its data store and
/// locker: create, append at an offset, ask the offset, terminate, one writer per upload, the type
/// sniffed from the first bytes, and — when the last byte arrives — the photo handed to its intake
/// (`ArrivalProcessor`) before the client is told it is done. tus 1.0 (`TusRoutes`) and the IETF draft
/// (`ResumableUploadRoutes`) are dialects: they read their headers, call these methods with the caller
/// their authentication found and the body as an `UploadBody` (never the request itself), and turn the outcome
/// or the `UploadRefusal` — one of its named rules, each with its status — into their own answer.
///
/// The storage rules are checked at creation (path, owner or group admin, size); ownership on every
/// later call (anyone else gets "no such upload", as if it did not exist).
struct UploadHandler: Sendable {
    let store: any PartialUploadStore
    /// One request at a time per upload (the sweeper's too).
    let locks = UploadLocks()
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
    /// The app's backend, asked before an upload is created (nil: nobody is asked).
    var hook: CreationHook?
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
            try await processor.intake.quotas?.checkRoom(for: path, declaring: length)
        } catch {
            if let failure = DependencyFailure(error) { throw refusal(failure) }
            if case .overQuota = error { throw UploadRefusal(.overQuota, "\(error)") }
            throw UploadRefusal(.notAllowed, "\(error)")
        }
        guard length < path.sizeLimit else {
            throw UploadRefusal(.tooLarge, "\(length) bytes: uploads to \(key.split(separator: "/").first ?? "") must be smaller than \(path.sizeLimit) bytes")
        }
        guard length > 0 else { throw UploadRefusal(.notAPhoto, "an empty upload is not a photo") }
        if let focus = metadata["focus"], FocalPoint(parsing: focus) == nil {
            throw UploadRefusal(.badFocus, "focus: \(FocalPoint.expected)")
        }
        let now = Date()
        let unfinished: Int
        do { unfinished = try await store.unfinished(now: now).filter { $0.owner == caller.id }.count } catch { throw refusal(error) }
        guard unfinished < maxUnfinishedPerUser else {
            throw UploadRefusal(.tooManyUnfinished, "\(caller.id) has \(unfinished) unfinished uploads; finish or delete one first (at most \(maxUnfinishedPerUser))")
        }
        if let hook { try await ask(hook, caller: caller, key: key, length: length, metadata: metadata) }
        var upload = TusUpload(
            id: TusUpload.newID(), owner: caller.id, ownerName: caller.displayName, path: path, length: length, metadata: metadata,
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
            // Finished meanwhile (by the sweeper, or another request), its bytes gone after its record said stored:
            // the offset read is of no upload still receiving.
            if upload.state == .receiving, held < upload.length {
                let now = try await owned(id, by: caller)
                if now.state == .stored { return (now, now.length) }
            }
            if upload.state == .receiving, held > 0, try await lost(upload) { throw UploadRefusal.gone }
            return (upload, held)
        case .finish:
            guard locks.lock(upload.id) else { throw UploadRefusal(.busyUpload, "the upload is busy") }
            defer { locks.unlock(upload.id) }
            try await finish(&upload)
            return (upload, upload.length)
        case .notFound, .conflict, .receive:
            throw UploadRefusal.noSuchUpload
        }
    }

    /// Appends `body` to `caller`'s upload `id` at `claimed`, which must be what the server holds, and
    /// returns the upload and its new offset, acknowledged only once durable (after `fsync`). The last
    /// byte finishes it: `upload.state` is then `.stored`. Throws `UploadRefusal`, or the body's own
    /// error when the client went away (what arrived is kept, flushed, for a resume).
    /// A body declaring more bytes (`Content-Length`) than the upload has left is refused (413) before any
    /// of it is read.
    /// `statedLength`: the length the request says the upload has (the draft lets an append say it again; -1 when it is
    /// not a number), refused (400) before any of the body is read unless it is the upload's.
    func append(
        to id: String, caller: Caller, at claimed: Int64, body: UploadBody, checksum: Tus.Checksum?, log: RequestLogEntry, statedLength: Int64? = nil
    ) async throws -> (upload: TusUpload, offset: Int64) {
        let visible = try await owned(id, by: caller)
        guard locks.lock(visible.id) else { throw UploadRefusal(.busyUpload, "another request is writing to this upload") }
        defer { locks.unlock(visible.id) }
        // Read again under the lock: the request that held it may have finished the upload.
        let current: TusUpload?, durable: Int64
        do throws(UploadStoreFailure) {
            current = try await store.upload(visible.id)
            durable = try await store.offset(visible.id)
        } catch {
            throw refusal(error)
        }
        if let statedLength, let current, statedLength != current.length {
            throw UploadRefusal(.malformed, "Upload-Length is not the upload's length, \(current.length) bytes")
        }
        switch UploadLifecycle.append(current, caller: caller.id, held: durable, claimed: claimed, now: Date()) {
        case .notFound, .finish:
            throw UploadRefusal.noSuchUpload
        case .conflict(let held):
            throw UploadRefusal(.offsetMismatch, "Upload-Offset is \(claimed) but the server holds \(held) bytes", held: held)
        case .answer(let held):
            // The upload is stored: a body has nowhere to go, and is refused before a byte of it is read (else a client
            // could stream gigabytes into a finished upload, every one read and dropped). An empty one asks the offset.
            if body.mayHoldBytes {
                throw UploadRefusal(.tooLarge, "the upload is complete: no byte fits after its \(held) bytes", held: held)
            }
            return (current ?? visible, held)
        case .receive(let from):
            guard var upload = current else { throw UploadRefusal.noSuchUpload }
            if let declared = body.declaredLength, declared > upload.length - from {
                throw UploadRefusal(.tooLarge, "the body's \(declared) bytes do not fit: \(upload.length - from) of the upload's \(upload.length) are left")
            }
            // A client waiting for a go-ahead before its body (`Expect: 100-continue`: curl's default for large bodies)
            // gets it now that the request is accepted; without it, each upload stalled until the client gave up waiting.
            if body.expectsContinue {
                try? await CurrentConnection.sendInterim(HTTPResponse(status: .continue))
            }
            let offset = try await receive(&upload, at: from, body.bytes, checksum: checksum, log: log)
            return (upload, offset)
        }
    }

    /// Removes `caller`'s upload `id` and its bytes — unless another instance is finishing it (423).
    func terminate(_ id: String, caller: Caller) async throws(UploadRefusal) {
        let upload = try await owned(id, by: caller)
        guard locks.lock(upload.id) else { throw UploadRefusal(.busyUpload, "another request is writing to this upload") }
        defer { locks.unlock(upload.id) }
        let deleted: Bool
        do { deleted = try await store.delete(upload.id) } catch { throw refusal(error) }
        guard deleted else { throw UploadRefusal(.busyUpload, "another server is finishing this upload; ask again in a moment") }
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
            do throws(FinishRefusal) { return .success(try await processor.finish(arriving, file: file)) } catch { return .failure(error) }
        }
        switch outcome {
        case nil:
            throw UploadRefusal(.busyUpload, "the upload is being finished")
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
                throw UploadRefusal.gone
            case .busy:
                throw UploadRefusal(.pipelineFull, "\(upload.key): \(error.description)")
            case .unprocessable:
                metrics.uploadsInProgress.decrement()
                throw UploadRefusal(.notPreparable, "\(upload.key): \(error.description)")
            case .notAllowed:
                metrics.uploadsInProgress.decrement()
                throw UploadRefusal(.notAllowed, "\(upload.key): \(error.description)")
            case .overQuota:
                metrics.uploadsInProgress.decrement()
                throw UploadRefusal(.overQuota, "\(upload.key): \(error.description)")
            }
        }
    }

    // MARK: - Refusals

    /// The app's backend's say on a new upload (`CreationHook`): nothing, or its refusal; when it cannot be asked, a
    /// log line and, unless failures allow, 503.
    private func ask(_ hook: CreationHook, caller: Caller, key: String, length: Int64, metadata: [String: String]) async throws(UploadRefusal) {
        let started = ContinuousClock.now
        let verdict = await hook.ask(caller: caller, key: key, length: length, metadata: metadata)
        metrics.hookSeconds.record(ContinuousClock.now - started)
        switch verdict {
        case .accept:
            return
        case .refuse(let status, let message):
            throw UploadRefusal(.refusedByHook, message, answer: HTTPResponse.Status(code: status))
        case .failed(let why):
            metrics.hookFailures.increment()
            logger.error("the upload hook failed", metadata: ["key": "\(key)", "detail": "\(why)", "policy": "\(hook.onFailure.rawValue)"])
            guard hook.onFailure == .allow else { throw UploadRefusal(.hookFailed, "the app's check of new uploads did not answer; ask again shortly") }
        }
    }

    /// The upload `id` if `caller` owns it and it has not expired; "no such upload" for anything else,
    /// so that nobody learns another user's upload exists.
    private func owned(_ id: String, by caller: Caller) async throws(UploadRefusal) -> TusUpload {
        let found: TusUpload?
        do { found = try await store.upload(id) } catch { throw refusal(error) }
        guard let upload = UploadLifecycle.visible(found, to: caller.id, now: Date()) else { throw UploadRefusal.noSuchUpload }
        return upload
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

    /// What a failing store answers: 409 when another request wrote first, 400 for an upload in too
    /// many pieces, 410 for acknowledged bytes that are gone, else the database's or the storage's failure (503,
    /// 507 when full).
    func refusal(_ failure: UploadStoreFailure) -> UploadRefusal {
        switch failure.kind {
        case .storage, .full: refusal(DependencyFailure(failure))
        case .gone: UploadRefusal.gone
        case .conflict: UploadRefusal(.offsetMismatch, failure.description)
        case .tooManyPieces: UploadRefusal(.malformed, failure.description)
        }
    }

    /// The database's or the storage's failure, reported (logged in full, counted) and refused as every route
    /// refuses one: 503 or 507 with `Retry-After`, and a message without the detail.
    func refusal(_ failure: DependencyFailure) -> UploadRefusal {
        failure.report(logger, metrics)
        return UploadRefusal(failure)
    }
}
