public import Foundation
import SQLKit
public import PhotoPrep
public import PhotoUpload
import PhotoFiles
public import NIOPosix

/// The group-creation and profile-photo services on one database and one storage destination.
///
/// ```swift
/// let services = try PhotoServices(folder: dataFolder, destination: "file:///srv/storage")
/// let created = try await services.groups.createGroup(
///     creator: "u1", name: "Hiking", participants: ["u2", "u3"], photo: .file("summit.jpg"))
/// for await event in await services.jobs.events(created.photoJob!) { print(event) }
/// ```
public final class PhotoServices: Sendable {
    public let database: AppDatabase
    public let jobs: PhotoJobs
    public let users: UserDirectory
    public let groups: GroupService
    public let profiles: ProfileService
    /// How photos are taken in (and their squares centred again: `PhotoIntake.refocus`).
    public let intake: PhotoIntake
    /// The stored photos: where each is (`location(of:)`), its version and token, its thumbnails.
    public let photos: StoredPhotos
    /// The admins' decisions on photos the app's review quarantined.
    public let moderation: Moderation

    /// The services on `intake` — the one a server takes its arriving photos in with, so that its limits
    /// (pixels, thumbnails, quality) hold for every way a photo arrives.
    /// - Parameters:
    ///   - stateFolder: staged photos and the upload journal live here.
    ///   - lease: how long a photo job stays with its runner unless renewed: after a crash, how long until
    ///     another runner (any process, any machine) takes it over.
    public init(database: AppDatabase, intake: PhotoIntake, stateFolder: URL, lease: Duration = .seconds(30)) {
        // Owner-only: staged photos and the journal of uploads in flight are nobody else's business.
        try? FileManager.default.createDirectory(at: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.database = database
        self.intake = intake
        jobs = PhotoJobs(
            store: JobStore(database: database, destination: intake.destination.name), intake: intake,
            staging: stateFolder.appendingPathComponent("staging"), lease: lease)
        users = UserDirectory(database: database)
        groups = GroupService(database: database, jobs: jobs)
        profiles = ProfileService(database: database, jobs: jobs)
        photos = StoredPhotos(database: database)
        moderation = Moderation(database: database, intake: intake)
    }

    /// - Parameters:
    ///   - database: the app database (a file, or in memory).
    ///   - destination: where photos go: a folder (`file://` or a path) or a bucket (`s3://`) this process
    ///     stores in, or a tus endpoint (`https://`) it uploads to as a client.
    ///   - stateFolder: staged photos and the upload journal live here.
    ///   - upload: how an upload server is uploaded to.
    ///   - environment: where an `s3://` destination finds its settings (nil: the process environment).
    ///   - credentials: the `Authorization` header for a user's uploads (e.g. `Bearer <token>`).
    ///   - cpu: the bounded pool photos are prepared on (default: NIO's, one thread per core).
    ///   - memory: what the photos prepared on `cpu` may hold together.
    public convenience init(
        database: AppDatabase, destination: String, stateFolder: URL, upload: UploadConfiguration = UploadConfiguration(),
        environment: [String: String]? = nil, lease: Duration = .seconds(30), cpu: NIOThreadPool = .singleton,
        memory: MemoryBudget? = nil, credentials: @escaping @Sendable (String) -> String? = { _ in nil }
    ) throws(ServiceError) {
        let target: PhotoDestination
        if destination.hasPrefix("http://") || destination.hasPrefix("https://") {
            var configuration = upload
            configuration.keepsFinishedInJournal = true
            do {
                target = .uploadServer(
                    try Uploader(
                        destination: destination, configuration: configuration,
                        journal: UploadJournal(folder: stateFolder.appendingPathComponent("uploads")), environment: environment))
            } catch {
                throw .invalidState("\(error)")
            }
        } else {
            target = .storage(try openPhotoStorage(destination, environment: environment))
        }
        self.init(
            database: database, intake: PhotoIntake(database: database, destination: target, cpu: cpu, memory: memory, credentials: credentials),
            stateFolder: stateFolder, lease: lease)
    }

    /// The embedded defaults in one folder: `app.sqlite`, the local store `storage/`, and the state.
    public convenience init(folder: URL, destination: String? = nil, credentials: @escaping @Sendable (String) -> String? = { _ in nil }) async throws(ServiceError) {
        try self.init(
            database: await AppDatabase(path: folder.appendingPathComponent("app.sqlite").path),
            destination: destination ?? folder.appendingPathComponent("storage").absoluteString,
            stateFolder: folder.appendingPathComponent("state"), credentials: credentials)
    }
}

/// Stages the caller's photo and the job that will prepare and upload it.
func newJob(
    kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, original: [UInt8], staging: URL,
    destination: String?, waitsFor: String? = nil, focus: FocalPoint? = nil
) throws(ServiceError) -> PhotoJob {
    let id = randomUUID()
    let originalPath = staging.appendingPathComponent("\(id).original").path
    // The caller's photo is copied: their file may go away before the job runs.
    // Owner-only: the original may carry GPS and serials until it is prepared (then it is deleted).
    do { try AtomicFile.write(original, to: originalPath, permissions: 0o600) } catch { throw .storage(error.message) }
    let now = Date()
    return PhotoJob(
        id: id, kind: kind, caller: caller, subject: subject, key: path.key, preset: path.preset.rawValue, originalPath: originalPath,
        preparedPath: nil, state: .pending, error: nil, attempts: 0, url: nil, uploadLocation: nil, uploadedBytes: 0, waitsFor: waitsFor, destination: destination, focus: focus?.description, leaseOwner: nil,
        leaseExpiresAt: nil, createdAt: now, updatedAt: now)
}
