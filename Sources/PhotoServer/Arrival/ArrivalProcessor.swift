import CoreMetrics
import Foundation
import PhotoPrep
import PhotoServices

/// What happens when the last byte of an upload arrived (tusd's `pre-finish`): the photo is taken in by
/// the services' `PhotoIntake` — prepared with its path's preset (one that already complies passes through
/// byte for byte; anything else is decoded, turned upright, resized and re-encoded under the budget with
/// its metadata dropped), stored under its key, recorded, and what it replaced deleted. This says what the
/// intake's answer means to the client that uploaded. Whatever a client sends, what is stored is upright,
/// fits the preset and carries no GPS.
struct ArrivalProcessor: Sendable {
    let intake: PhotoIntake
    let metrics: ServerMetrics
    /// How many photos may be prepared or wait for it at once.
    let admission: Admission

    /// Takes the photo in `file` in; returns the stored object's URL. Refused at once (`busy`) rather than
    /// queued without bound when as many photos as may wait are waiting.
    func finish(_ upload: TusUpload, file: String) async throws(FinishRefusal) -> String {
        guard admission.enter() else {
            throw FinishRefusal(kind: .busy, description: "\(admission.capacity) photos are being prepared or waiting for it; ask again shortly")
        }
        defer { admission.leave() }
        do {
            let focus = upload.metadata["focus"].flatMap { FocalPoint(parsing: $0) }
            let taken = try await intake.take(file, path: upload.path, caller: upload.owner, displayName: upload.ownerName, focus: focus)
            metrics.pipelineSeconds.record(taken.preparing)
            metrics.photosStored.increment()
            return taken.url
        } catch {
            switch error {
            case .notAllowed: throw FinishRefusal(kind: .notAllowed, description: "\(error)")
            case .storage: throw FinishRefusal(kind: .unavailable, description: "\(error)")
            case .storageFull: throw FinishRefusal(kind: .full, description: "\(error)")
            case .overQuota: throw FinishRefusal(kind: .overQuota, description: "\(error)")
            default: throw FinishRefusal(kind: .unprocessable, description: "\(error)")
            }
        }
    }
}

extension CoreMetrics.Timer {
    func record(_ duration: Duration) {
        recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
