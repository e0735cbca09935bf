public import Foundation
public import PhotoUpload

/// One photo job's lifecycle while a runner holds it — pure: events in, actions out (the runner does
/// the I/O), so every path is table-tested. Like `UploadStateMachine` for the upload protocol.
///
///     claimed ─▶ preparing ─▶ uploading ─▶ recording ─▶ ended
///        └─────(prepared already)─┘   │
///                                     └─▶ ended (failed, pending, cancelled, paused at shutdown, lease lost)
public struct PhotoJobMachine: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case claimed, preparing, uploading, recording, ended
    }

    public enum Event: Sendable, Equatable {
        /// The runner holds the job; `preparedPath`: prepared by an earlier attempt.
        case claimed(preparedPath: String?)
        case prepared(path: String)
        /// `unsupported`: the photo itself is refused (retrying cannot help; its original goes).
        case prepareFailed(reason: String, unsupported: Bool)
        case upload(UploadEvent, at: Date)
        /// The job's URL and effect were recorded; `replaced`: objects to delete now (a replaced profile
        /// picture and its thumbnails).
        case recorded(url: String, replaced: [String])
        /// The runner no longer held the job when recording (taken over after its lease ran out).
        case notRecorded
        case recordFailed(reason: String)
        case cancelRequested
        /// The runner is stopping (graceful shutdown): pause, keep the job resumable.
        case stopRequested
        /// Renewing the lease found the job held by another runner.
        case leaseLost
    }

    public enum Action: Sendable, Equatable {
        case emit(PhotoJobEvent)
        case prepare
        case savePrepared(path: String)
        /// The original (EXIF, GPS, serials) is not kept a moment longer than needed.
        case deleteOriginal
        case startUpload(path: String)
        case saveLocation(String)
        case saveUploadedBytes(Int64)
        case cancelUpload
        case pauseUpload
        case record(location: String)
        case deleteReplaced(url: String)
        case forgetUpload
        /// Writes the job's end (pending, failed, cancelled) and releases the lease.
        case end(PhotoState, error: String?)
        /// The job's terminal event; the runner lets go of it.
        case finish(PhotoJobEvent)
    }

    public private(set) var state: State = .claimed
    private var cancelRequested = false
    private var stopRequested = false
    private var lastSavedProgress: Date?
    /// How often acknowledged bytes are written to the database.
    let progressInterval: TimeInterval

    public init(progressInterval: TimeInterval = 1) {
        self.progressInterval = progressInterval
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.claimed, .claimed(let prepared?)):
            state = .uploading
            return [.deleteOriginal, .startUpload(path: prepared)]
        case (.claimed, .claimed(nil)):
            state = .preparing
            return [.emit(.preparing), .prepare]
        case (.preparing, .prepared(let path)):
            if cancelRequested { return end(.cancelled, error: nil) }
            if stopRequested { return [.savePrepared(path: path), .deleteOriginal] + end(.pending, error: nil) }
            state = .uploading
            return [.savePrepared(path: path), .deleteOriginal, .startUpload(path: path)]
        case (.preparing, .prepareFailed(let reason, let unsupported)):
            if cancelRequested { return end(.cancelled, error: nil) }
            return (unsupported ? [.deleteOriginal] : []) + end(.failed, error: reason)
        case (.uploading, .upload(let upload, let now)):
            return uploading(upload, now: now)
        case (.recording, .recorded(let url, let replaced)):
            state = .ended
            return [.forgetUpload] + replaced.map { .deleteReplaced(url: $0) } + [.finish(.finished(url: url))]
        case (.recording, .notRecorded):
            state = .ended
            return [.finish(.pending(reason: "another runner took the job over"))]
        case (.recording, .recordFailed(let reason)):
            return end(.pending, error: reason)
        case (.preparing, .cancelRequested):
            cancelRequested = true
            return []
        case (.uploading, .cancelRequested):
            cancelRequested = true
            return [.cancelUpload]
        case (.preparing, .stopRequested):
            stopRequested = true
            return []
        case (.uploading, .stopRequested):
            stopRequested = true
            return [.pauseUpload]
        case (.preparing, .leaseLost), (.uploading, .leaseLost):
            // Someone else runs it now: stop without writing anything over their work.
            let wasUploading = state == .uploading
            state = .ended
            return (wasUploading ? [.pauseUpload] : []) + [.finish(.pending(reason: "another runner took the job over"))]
        default:
            return []
        }
    }

    private mutating func uploading(_ event: UploadEvent, now: Date) -> [Action] {
        switch event {
        case .started(let location):
            return [.saveLocation(location)]
        case .progress(let progress):
            var actions: [Action] = [.emit(.progress(progress))]
            let due = lastSavedProgress.map { now.timeIntervalSince($0) >= progressInterval } ?? true
            if progress.acknowledged > 0, due || progress.acknowledged == progress.total {
                lastSavedProgress = now
                actions.append(.saveUploadedBytes(progress.acknowledged))
            }
            return actions
        case .retrying(let retry):
            return [.emit(.retrying(retry))]
        case .paused:
            // Only the runner pauses, and only to stop: the upload resumes from here next time.
            return stopRequested ? end(.pending, error: nil) : []
        case .finished(let location):
            state = .recording
            return [.record(location: location)]
        case .failed(let error):
            // Unreachable for the whole retry budget: pending, for the next sync. Anything else: failed.
            return error.isTransient ? end(.pending, error: error.description) : end(.failed, error: error.description)
        case .cancelled:
            return end(.cancelled, error: nil)
        }
    }

    private mutating func end(_ ending: PhotoState, error: String?) -> [Action] {
        state = .ended
        let event: PhotoJobEvent =
            switch ending {
            case .failed: .failed(reason: error ?? "failed")
            case .cancelled: .cancelled
            default: .pending(reason: error ?? "stopped; resumes where it stopped")
            }
        return [.end(ending, error: error), .finish(event)]
    }
}
