public import Foundation
import PhotoFiles
import SQLKit
import NIOHTTP1
public import PhotoPrep
public import PhotoUpload

/// The services in remote mode: an app's side of `photoprep serve`, offline-first.
///
/// Groups are created through the server's API and photos go to its upload endpoint (`/files/`,
/// tus), with the signed-in user's bearer token. What cannot reach the server is kept in a local
/// SQLite file in `folder` and sent by `sync()` — in this process or, after a restart, in the next:
///
/// ```swift
/// let client = try await PhotoClient(server: URL(string: "https://photos.example.com")!, folder: appSupport,
///                              token: { keychain.idToken })
/// let group = try await client.createGroup(name: "Hiking", participants: ["u2", "u3"], photo: .file("summit.jpg"))
/// if let reason = group.pending { show("will be created when online: \(reason)") }
/// // later, e.g. when the network is back or at the next launch:
/// let report = await client.sync()
/// ```
///
/// A group created offline gets its id here (a UUID); the server creates a group once per id, so a
/// creation sent again after a crash or a lost answer yields the same group, one system message,
/// one notification per participant. Its photo waits until the server has the group.
public final class PhotoClient: Sendable {
    public let server: URL
    /// The client's own database: groups waiting for the server, photo jobs.
    public let database: AppDatabase
    /// The photo uploads: the same jobs, events, retries and cancellation as the embedded services.
    public let jobs: PhotoJobs
    let api: ServiceAPI
    let token: @Sendable () -> String?

    /// - Parameters:
    ///   - server: the base URL of `photoprep serve` (its API under `/v1/`, uploads under `/files/`).
    ///   - folder: the client's state: `client.sqlite`, staged photos, the upload journal. One folder per server.
    ///   - upload: chunking, retries and the retry budget of photo uploads.
    ///   - requestTimeout: how long one API call may take before the server counts as unreachable.
    ///   - token: the signed-in user's current JWT (asked before every request, so a refreshed one is used).
    public init(
        server: URL, folder: URL, upload: UploadConfiguration = UploadConfiguration(), requestTimeout: Duration = .seconds(10),
        lease: Duration = .seconds(30), token: @escaping @Sendable () -> String?
    ) async throws(ServiceError) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = upload
        configuration.keepsFinishedInJournal = true
        let uploader: Uploader
        do {
            uploader = try Uploader(
                destination: server.appendingPathComponent("files/").absoluteString, configuration: configuration,
                journal: UploadJournal(folder: folder.appendingPathComponent("uploads")))
        } catch {
            throw .invalidState("\(error)")
        }
        let api = ServiceAPI(server: server, token: token, timeout: requestTimeout)
        self.server = server
        self.api = api
        self.token = token
        database = try await AppDatabase(path: folder.appendingPathComponent("client.sqlite").path, role: .client)
        // The server records what a stored photo changes: the client's store keeps the jobs only.
        jobs = PhotoJobs(
            store: JobStore(database: database, recordsEffects: false, destination: uploader.destination),
            intake: PhotoIntake(database: database, destination: .uploadServer(uploader), credentials: { _ in token().map { "Bearer \($0)" } }),
            staging: folder.appendingPathComponent("staging"), lease: lease,
            photoURL: { job, location in
                // The upload's location is the server's; the photo's URL is what the server stored.
                switch try? StoragePath(key: job.key) {
                case .userPhoto(_, let album, _)?: return await api.readyAlbumPhotoURL(album: album, key: job.key) ?? location
                case .groupPhoto(let group)?: return await api.readyPhotoURL("v1/groups/\(group)/photo") ?? location
                default: return await api.readyPhotoURL("v1/me/photo") ?? location
                }
            })
    }

    /// A group's photo as the server shows it to a member: its state and the download URLs an image
    /// view loads without a token (the photo's and its thumbnails').
    public func groupPhoto(_ groupId: String) async throws(ServiceError) -> PhotoLinks {
        try await api.photoLinks("v1/groups/\(try StorageRules.validated(groupId, "group id"))/photo")
    }

    /// The signed-in user's profile picture as the server shows it, with its download URLs.
    public func profilePhoto() async throws(ServiceError) -> PhotoLinks {
        try await api.photoLinks("v1/me/photo")
    }

    /// Centres the square thumbnails of the signed-in user's profile picture on `focus` (nil: where the server's
    /// attention rule puts them); returns the picture with its new download URLs.
    public func setProfilePhotoFocus(_ focus: FocalPoint?) async throws(ServiceError) -> PhotoLinks {
        try await api.setFocus("v1/me/photo", focus?.description)
    }

    /// Centres the square thumbnails of a group's photo on `focus` (the group's admins only).
    public func setGroupPhotoFocus(_ groupId: String, _ focus: FocalPoint?) async throws(ServiceError) -> PhotoLinks {
        try await api.setFocus("v1/groups/\(try StorageRules.validated(groupId, "group id"))/photo", focus?.description)
    }

    /// The signed-in user, from the token's `sub`.
    func me() throws(ServiceError) -> String {
        guard let token = token() else { throw .notAllowed("no token: sign in first") }
        guard let id = subject(ofJWT: token) else { throw .notAllowed("the token is not a JWT with a subject") }
        return try StorageRules.validated(id, "user id")
    }

    // MARK: - Groups

    /// A group as the client knows it: created on the server, or kept pending.
    public struct Group: Sendable, Equatable {
        public var id: String
        public var name: String
        /// The members the server recorded (nil while pending).
        public var members: [String]?
        /// The photo's job (its events: `jobs.events(id)`).
        public var photoJob: String?
        /// Why the server does not have it yet (nil: created). `sync()` sends it.
        public var pending: String?
    }

    /// Creates a group with the signed-in user as creator and first admin. The rules the client can
    /// check (name, participant count) are checked here, offline too; the server checks them again
    /// and those only it knows (unknown users). The creation is recorded locally before it is sent,
    /// so a process killed meanwhile loses nothing.
    ///
    /// Returns the group created, or kept pending (`pending` says why) when the server did not answer
    /// (or cannot decide now: 5xx, 429, an expired token). Throws when the server refused it (nothing
    /// is kept). The photo uploads once the server has the group.
    public func createGroup(name: String, participants: [String], photo: PhotoInput? = nil, id: String? = nil) async throws(ServiceError) -> Group {
        let creator = try me()
        let (name, others, groupId) = try GroupRules.creation(creator: creator, name: name, participants: participants, id: id)
        let original = try photo?.load()
        let job = try original.map { bytes throws(ServiceError) in
            try newJob(
                kind: .group, caller: creator, subject: groupId, path: .groupPhoto(groupId: groupId), original: bytes,
                staging: jobs.staging, destination: jobs.store.destination, waitsFor: groupId)
        }
        let now = Date()
        let pending = PendingGroup(
            id: groupId, name: name, participants: others, photoJob: job?.id, state: .pending, error: nil, attempts: 0, createdAt: now,
            updatedAt: now)
        do {
            try await database.write { db in
                if let existing = try await db.select().columns("*").from("pendingGroup").where("id", .equal, groupId).first(decoding: PendingGroup.self) {
                    throw ServiceError.invalidState("group \(groupId) was created here already (\(existing.state.rawValue))")
                }
                try await db.insert(into: "pendingGroup").model(pending).run()
                if let job { try await JobStore.insert(job, db) }
            }
        } catch {
            if let job { try? FileManager.default.removeItem(atPath: job.originalPath) }
            throw error
        }
        let sent = try await send(pending)
        switch sent.state {
        case .refused:
            // Refused at once: nothing exists, nothing is kept.
            try await database.write { db in
                try await db.delete(from: "pendingGroup").where("id", .equal, groupId).run()
                if let job { try await JobStore.delete(job.id, db) }
            }
            if let job { try? FileManager.default.removeItem(atPath: job.originalPath) }
            throw .rejected(sent.error ?? "refused")
        case .created:
            return Group(id: groupId, name: sent.name, members: sent.members, photoJob: job?.id, pending: nil)
        case .pending:
            return Group(id: groupId, name: name, members: nil, photoJob: job?.id, pending: sent.error)
        }
    }

    /// The outcome of sending one creation.
    struct Sent {
        var state: PendingGroup.State
        var name: String
        var members: [String]?
        var error: String?
    }

    /// Sends one pending creation and records the server's answer (`CreationLifecycle`).
    private func send(_ group: PendingGroup) async throws(ServiceError) -> Sent {
        let answer = await api.call(.POST, "v1/groups", json: ServiceAPI.CreateGroup(id: group.id, name: group.name, participants: group.participants))
        var status: Int?
        var created: ServiceAPI.Group?
        if case .answered(let code, let body) = answer {
            status = code
            created = try? JSONDecoder().decode(ServiceAPI.Group.self, from: Data(body))
        }
        var step = CreationLifecycle.step(status: status, detail: answer.detail)
        if step == .created, created?.id != group.id {
            step = .keepPending("the server's answer is not the group \(group.id)")
        }
        let now = Date()
        switch step {
        case .created:
            try await database.write { db in
                try await Self.answered(group.id, state: .created, error: nil, now: now, db)
                try await JobStore.release(waitingFor: group.id, db)
            }
            if let job = group.photoJob { jobs.start(job) }
            return Sent(state: .created, name: created?.name ?? group.name, members: created?.members.map(\.userId))
        case .refused(let reason):
            let reason = "the server refused group \(group.id): \(reason)"
            try await database.write { db in
                try await Self.answered(group.id, state: .refused, error: reason, now: now, db)
                try await JobStore.fail(waitingFor: group.id, reason: reason, db)
            }
            return Sent(state: .refused, name: group.name, error: reason)
        case .keepPending(let reason):
            try await database.write { db in try await Self.answered(group.id, state: .pending, error: reason, now: now, db) }
            return Sent(state: .pending, name: group.name, error: reason)
        }
    }

    /// Records one more attempt at sending the creation, and how it stands.
    private static func answered(_ id: String, state: PendingGroup.State, error: String?, now: Date, _ db: any SQLDatabase) async throws {
        try await db.update("pendingGroup").set("state", to: state.rawValue).set("error", to: bindOrNull(error))
            .set("attempts", to: SQLBinaryExpression(SQLColumn("attempts"), .add, SQLLiteral.numeric("1"))).set("updatedAt", to: now)
            .where("id", .equal, id).run()
    }

    /// The creations not yet answered by the server, and those it refused, oldest first.
    public func pendingGroups() async throws(ServiceError) -> [PendingGroup] {
        try await pendingGroups(.notEqual, .created)
    }

    private func pendingGroups(_ op: SQLBinaryOperator, _ state: PendingGroup.State) async throws(ServiceError) -> [PendingGroup] {
        try await database.read { db in
            try await db.select().columns("*").from("pendingGroup").where("state", op, state.rawValue).orderBy("createdAt").orderBy("id")
                .all(decoding: PendingGroup.self)
        }
    }

    /// Replaces a group's photo (the server lets only its admins), its square thumbnails centred on `focus` when given
    /// (sent with the upload; nil: where the server's attention rule puts them).
    @discardableResult
    public func setGroupPhoto(groupId: String, photo: PhotoInput, focus: FocalPoint? = nil) async throws(ServiceError) -> String {
        let groupId = try StorageRules.validated(groupId, "group id")
        return try await jobs.submit(kind: .group, caller: try me(), subject: groupId, path: .groupPhoto(groupId: groupId), photo: photo, focus: focus)
    }

    /// Sets the signed-in user's profile picture (`profile_images/{me}/{id}.jpg`), its square thumbnails centred on
    /// `focus` when given (sent with the upload).
    @discardableResult
    public func setProfilePhoto(_ photo: PhotoInput, focus: FocalPoint? = nil) async throws(ServiceError) -> String {
        let me = try me()
        let path = StoragePath.profileImage(userId: me, file: "\(randomUUID()).jpg")
        return try await jobs.submit(kind: .profile, caller: me, subject: me, path: path, photo: photo, focus: focus)
    }

    /// Removes the signed-in user's profile picture: the server deletes it and its thumbnails.
    public func deleteProfilePhoto() async throws(ServiceError) {
        try await api.deleteProfilePhoto()
    }

    /// Adds a photo to one of the signed-in user's albums (`user_photos/{me}/{album}/{id}.jpg`, the photo
    /// preset); the server lists it in the album once it is stored. Returns the upload's job.
    @discardableResult
    public func addAlbumPhoto(album: String, photo: PhotoInput) async throws(ServiceError) -> String {
        let me = try me()
        let id = randomUUID()
        let path = StoragePath.userPhoto(userId: me, album: try StorageRules.validated(album, "album"), file: "\(id).jpg")
        return try await jobs.submit(kind: .album, caller: me, subject: id, path: path, photo: photo)
    }

    /// The signed-in user's photos in `album` as the server lists them (oldest first), with their
    /// download URLs and thumbnails.
    public func albumPhotos(_ album: String) async throws(ServiceError) -> [AlbumPhotoLinks] {
        try await api.albumPhotos(try StorageRules.validated(album, "album"))
    }

    /// Deletes one of the signed-in user's album photos (its id as `albumPhotos` lists it): the server
    /// deletes the stored photo and its thumbnails.
    public func deleteAlbumPhoto(album: String, photoId: String) async throws(ServiceError) {
        try await api.deleteAlbumPhoto(album: try StorageRules.validated(album, "album"), photoId: try StorageRules.validated(photoId, "photo id"))
    }

    // MARK: - Sync

    /// Sends the pending group creations (oldest first; when the server does not answer, the rest
    /// wait for the next sync), then uploads the photos that can go: those of groups the server has
    /// now, and any left pending or half-way by an earlier process.
    public func sync() async -> SyncReport {
        let waiting = (try? await pendingGroups(.equal, .pending)) ?? []
        var sent: [String] = []
        for group in waiting {
            sent.append(group.id)
            guard let outcome = try? await send(group), outcome.state != .pending else { break }
        }
        let photos = await jobs.sync()
        let ids = sent
        let groups = (try? await database.read { db in
            try await db.select().columns("*").from("pendingGroup").where("id", .in, ids).all(decoding: PendingGroup.self)
        }) ?? []
        return SyncReport(groups: sent.compactMap { id in groups.first { $0.id == id } }, photos: photos)
    }
}
