import Foundation
import NIOPosix
import PhotoFiles
import PhotoPrep
import PhotoUpload

/// The I/O steps a job's run takes for its machine: preparing the staged original, and putting the prepared photo into
/// storage this process owns.
extension PhotoJobs {
    /// Puts the prepared photo at `path` whole into storage this process owns; its events as an upload's
    /// would be: all its bytes acknowledged, then finished — or failed (a storage failure is transient: the
    /// job stays pending for the next sync).
    static func put(_ path: String, key: String, in storage: any PhotoStorage) async -> AsyncStream<UploadEvent> {
        let (events, continuation) = AsyncStream.makeStream(of: UploadEvent.self)
        defer { continuation.finish() }
        let read = try? await NIOThreadPool.singleton.runIfActive { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }
        guard let bytes = read ?? nil else {
            continuation.yield(.failed(UploadError(.io, "\(path): cannot read the prepared photo")))
            return events
        }
        do throws(ServiceError) {
            let stored = try await storage.put(bytes, key: key)
            let total = Int64(bytes.count)
            continuation.yield(.progress(UploadProgress(acknowledged: total, sent: total, total: total)))
            continuation.yield(.finished(location: stored.location))
        } catch {
            continuation.yield(.failed(UploadError(.unreachable, error.description)))
        }
        return events
    }

    /// Prepares the staged original (the intake's rules and pool) and stages the JPEG, written
    /// atomically; returns its path.
    func prepare(_ job: PhotoJob) async throws(ServiceError) -> String {
        let prepared = try await intake.prepare(contentsOf: job.originalPath, for: try StoragePath(key: job.key))
        let path = staging.appendingPathComponent("\(job.id).jpg").path
        do { try AtomicFile.write(prepared.jpeg, to: path, permissions: 0o600) } catch { throw .storage(error.message) }
        return path
    }
}
