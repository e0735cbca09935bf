import Foundation

/// An upload's life on the server — receiving → every byte here → stored (or refused and deleted), or
/// expired — as pure functions of its record, the bytes the server holds and what the request says.
/// They return what to do; `UploadHandler` performs it (file I/O, the pipeline, the answer).
///
/// | request | record | held | → |
/// |---|---|---|---|
/// | any | none, another owner's, or past `expiresAt` | | `notFound` (404: nobody learns it exists) |
/// | HEAD | receiving | < length | `answer(held)` |
/// | HEAD | receiving | = length | `finish` (the server stopped before storing it) |
/// | HEAD, PATCH at length | stored | | `answer(length)` |
/// | PATCH at `claimed` ≠ what is held | | | `conflict(held)` (409) |
/// | PATCH at `claimed` = held | receiving | | `receive(from: held)` |
/// | body read up to `offset` | | = length, not stopping | `finish` |
/// | body read up to `offset` | | otherwise | `answer(offset)` |
enum UploadLifecycle {
    enum Action: Equatable {
        case notFound
        case conflict(held: Int64)
        case answer(offset: Int64)
        case receive(from: Int64)
        case finish
    }

    /// The upload as `caller` may see it: theirs and not expired.
    static func visible(_ upload: TusUpload?, to caller: String, now: Date) -> TusUpload? {
        guard let upload, upload.owner == caller, upload.expiresAt > now else { return nil }
        return upload
    }

    /// `HEAD`: how many bytes the server holds.
    static func query(_ upload: TusUpload?, caller: String, held: Int64, now: Date) -> Action {
        guard let upload = visible(upload, to: caller, now: now) else { return .notFound }
        switch upload.state {
        case .stored: return .answer(offset: upload.length)
        case .receiving: return held >= upload.length ? .finish : .answer(offset: held)
        }
    }

    /// `PATCH` at `claimed`.
    static func append(_ upload: TusUpload?, caller: String, held: Int64, claimed: Int64, now: Date) -> Action {
        guard let upload = visible(upload, to: caller, now: now) else { return .notFound }
        let offset = upload.state == .stored ? upload.length : held
        guard claimed == offset else { return .conflict(held: offset) }
        return upload.state == .stored ? .answer(offset: offset) : .receive(from: offset)
    }

    /// A request body was read up to `offset` (flushed, unless it completes the upload: see `UploadHandler.receive`).
    static func received(_ upload: TusUpload, offset: Int64, stopping: Bool) -> Action {
        offset == upload.length && !stopping ? .finish : .answer(offset: offset)
    }
}
