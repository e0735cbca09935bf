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
    /// Why an arrived photo was not stored.
    struct Refusal: Error, CustomStringConvertible {
        enum Kind: String {
            /// Not a photo we can decode, or not one that fits its path once prepared: nothing is stored (422).
            case unprocessable
            /// The caller may no longer write there (e.g. no longer a group admin): nothing is stored (403).
            case notAllowed
            /// Storage, the database or the pipeline's pool failed: the bytes are kept and the client may ask again (503).
            case unavailable
            /// The storage has no room: the bytes are kept and the client may ask again later (507).
            case full
            /// As many photos as may wait are waiting for the pipeline: the bytes are kept; ask again (503).
            case busy
            /// Bytes the server acknowledged are no longer in its store: the upload ends, to be started again (410).
            case gone
        }

        var kind: Kind
        var description: String

        /// The upload's bytes are kept for the client to ask again (503), not deleted with it.
        var keepsBytes: Bool { kind == .unavailable || kind == .full || kind == .busy }
    }

    let intake: PhotoIntake
    let metrics: ServerMetrics
    /// How many photos may be prepared or wait for it at once.
    let admission: Admission

    /// Takes the photo in `file` in; returns the stored object's URL. Refused at once (`busy`) rather than
    /// queued without bound when as many photos as may wait are waiting.
    func finish(_ upload: TusUpload, file: String) async throws(Refusal) -> String {
        guard admission.enter() else {
            throw Refusal(kind: .busy, description: "\(admission.capacity) photos are being prepared or waiting for it; ask again shortly")
        }
        defer { admission.leave() }
        do {
            let focus = upload.metadata["focus"].flatMap { FocalPoint(parsing: $0) }
            let taken = try await intake.take(file, key: upload.key, caller: upload.owner, displayName: upload.ownerName, focus: focus)
            metrics.pipelineSeconds.record(taken.preparing)
            metrics.photosStored.increment()
            return taken.url
        } catch {
            switch error {
            case .notAllowed: throw Refusal(kind: .notAllowed, description: "\(error)")
            case .storage: throw Refusal(kind: .unavailable, description: "\(error)")
            case .storageFull: throw Refusal(kind: .full, description: "\(error)")
            default: throw Refusal(kind: .unprocessable, description: "\(error)")
            }
        }
    }
}

extension CoreMetrics.Timer {
    func record(_ duration: Duration) {
        recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
