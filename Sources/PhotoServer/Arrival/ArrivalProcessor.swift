import CoreMetrics
import Foundation
import NIOPosix
import PhotoPrep
import PhotoServices
import PhotoUpload

/// What happens when the last byte of an upload arrived (tusd's `pre-finish`): the photo is prepared
/// with its path's preset — one that already complies passes through byte for byte, anything else is
/// decoded, turned upright, resized and re-encoded under the budget with its metadata dropped — then
/// stored under its key, and only then recorded in the services (group photo, profile picture, album
/// photo); last, the object the new photo replaces (a profile picture under another name) is deleted.
/// Whatever a client sends, what is stored is upright, fits the preset and carries no GPS.
struct ArrivalProcessor: Sendable {
    /// Why an arrived photo was not stored.
    struct Refusal: Error, CustomStringConvertible {
        enum Kind: String {
            /// Not a photo we can decode, or not one that fits its path once prepared: nothing is stored (422).
            case unprocessable
            /// The caller may no longer write there (e.g. no longer a group admin): nothing is stored (403).
            case notAllowed
            /// Storage or the database failed: the bytes are kept and the client may ask again (503).
            case unavailable
        }

        var kind: Kind
        var description: String
    }

    let arrivals: PhotoArrivals
    let storage: Uploader
    /// Replaced objects whose deletion failed, tried again by the sweeper (`deleteStaleObjects`).
    let stale: StaleObjects
    /// The bounded pool CPU work runs on (one thread per core).
    let cpu: NIOThreadPool
    let metrics: ServerMetrics

    /// Prepares, stores and records the photo in `file`; returns the stored object's URL.
    func finish(_ upload: TusUpload, file: String) async throws(Refusal) -> String {
        let path: StoragePath
        do { path = try StoragePath(key: upload.key) } catch { throw Refusal(kind: .notAllowed, description: "\(error)") }
        let started = ContinuousClock.now
        let result: Result<PreparedPhoto, PhotoPrepError>
        do {
            result = try await cpu.runIfActive { () -> Result<PreparedPhoto, PhotoPrepError> in
                do throws(PhotoPrepError) { return .success(try PhotoPipeline(preset: path.preset).prepare(contentsOf: file)) } catch { return .failure(error) }
            }
        } catch {
            throw Refusal(kind: .unavailable, description: "the server is stopping")
        }
        metrics.pipelineSeconds.record(since: started)
        let prepared: PreparedPhoto
        switch result {
        case .success(let photo): prepared = photo
        case .failure(let error): throw Refusal(kind: .unprocessable, description: "the photo cannot be prepared: \(error)")
        }
        do {
            try StorageRules.checkUpload(prepared.jpeg, to: path)
            try await arrivals.authorize(caller: upload.owner, writing: path)
        } catch {
            if case .notAllowed = error { throw Refusal(kind: .notAllowed, description: "\(error)") }
            if case .storage = error { throw Refusal(kind: .unavailable, description: "\(error)") }
            throw Refusal(kind: .unprocessable, description: "\(error)")
        }
        let stored = await storage.upload(.bytes(prepared.jpeg), request: UploadRequest(key: path.key, contentType: "image/jpeg")).result()
        guard case .finished(let location) = stored else {
            throw Refusal(kind: .unavailable, description: "the photo could not be stored: \(stored)")
        }
        let url = storage.objectURL(key: path.key) ?? location
        let replaced: String?
        do {
            replaced = try await arrivals.record(caller: upload.owner, displayName: upload.ownerName, path: path, url: url)
        } catch {
            if case .notAllowed = error { throw Refusal(kind: .notAllowed, description: "\(error)") }
            throw Refusal(kind: .unavailable, description: "\(error)")
        }
        metrics.photosStored.increment()
        // The record points at the new photo already: deleting the old one leaves no broken window.
        if let replaced {
            let storage = self.storage
            await stale.delete(replaced, caller: upload.owner) { url in try await storage.delete(url) }
        }
        return url
    }

    /// Deletes the replaced objects that could not be deleted when they were replaced.
    func deleteStaleObjects() async {
        let storage = self.storage
        await stale.retryAll { url, _ in try await storage.delete(url) }
    }
}

extension CoreMetrics.Timer {
    func record(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
