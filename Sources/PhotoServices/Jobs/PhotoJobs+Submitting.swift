import Foundation
import SQLKit
import PhotoPrep

/// How a photo becomes a job: staged, recorded in one transaction with what it belongs to, and started.
extension PhotoJobs {
    /// Stages the caller's photo as a new job, records it in one transaction with `also` (what it
    /// belongs to), and starts it. Nothing is kept when the transaction fails.
    func submit(
        kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, photo: PhotoInput, focus: FocalPoint? = nil,
        also: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in }
    ) async throws(ServiceError) -> String {
        let job = try newJob(kind: kind, caller: caller, subject: subject, path: path, original: try photo.load(), staging: staging,
            destination: store.destination, focus: focus)
        do {
            try await store.database.write { db in
                try await also(db)
                try await JobStore.insert(job, db)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: job.originalPath)
            throw error
        }
        start(job.id)
        return job.id
    }
}
