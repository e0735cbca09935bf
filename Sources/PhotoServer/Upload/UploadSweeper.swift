import CoreMetrics
import Foundation
import Logging
import PhotoServices
import ServiceLifecycle

/// tus' expiration, and the recovery of uploads the server stopped finishing: every `interval`, uploads
/// past their expiry are deleted, an upload that holds all its bytes but was never stored (the server
/// stopped between the last byte and the store) is finished, and replaced photos that storage refused
/// to delete are deleted.
struct UploadSweeper: Service {
    let store: any PartialUploadStore
    /// The upload core's locker: an upload a request holds is left for the next sweep.
    var locks = UploadLocks()
    let metrics: ServerMetrics
    let interval: Duration
    let finish: @Sendable (TusUpload) async -> Void
    var deleteStaleObjects: @Sendable () async -> Void = {}
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await sweep()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    func sweep(now: Date = Date()) async {
        let uploads: [TusUpload]
        do { uploads = try await store.all() } catch {
            logger.error("sweep skipped: \(error)")
            return
        }
        // Counted afresh each time: with a shared store, other instances start and finish uploads too.
        metrics.uploadsInProgress.set(uploads.filter { $0.state == .receiving }.count)
        await store.housekeeping(now: now)
        await deleteStaleObjects()
        for upload in uploads {
            guard locks.lock(upload.id) else { continue }
            defer { locks.unlock(upload.id) }
            if upload.expiresAt <= now {
                // Not while another instance finishes it; a failure is tried again next sweep.
                guard (try? await store.delete(upload.id)) == true else { continue }
                if upload.state == .receiving { metrics.uploadsInProgress.decrement() }
                logger.info("expired upload removed", metadata: ["upload": "\(upload.id)", "key": "\(upload.key)"])
            } else if upload.state == .receiving, (try? await store.offset(upload.id)) == upload.length {
                await finish(upload)
            }
        }
    }
}

extension UploadSweeper {
    /// The sweeper of the server's uploads: complete ones finished through the upload core (a refusal is
    /// logged; the core deleted the upload or keeps it for the next sweep), stale objects deleted by the intake.
    init(uploads: UploadHandler, interval: Duration, logger: Logger) {
        self.init(
            store: uploads.store, locks: uploads.locks, metrics: uploads.metrics, interval: interval,
            finish: { upload in
                var upload = upload
                do throws(UploadRefusal) { try await uploads.finish(&upload) } catch {
                    logger.info("a complete upload was not stored", metadata: ["upload": "\(upload.id)", "reason": "\(error.description)"])
                }
            },
            deleteStaleObjects: { await uploads.processor.intake.deleteStaleObjects() }, logger: logger)
    }
}
