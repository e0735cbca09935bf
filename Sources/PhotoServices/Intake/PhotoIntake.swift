import Foundation
import PhotoFiles
public import NIOPosix
public import PhotoPrep
import PhotoUpload
import SQLKit

/// Taking a photo in, in one definition: who may write its path, preparing it with the path's preset on
/// the bounded CPU pool and checking the result against the path's limits, storing it, recording what
/// storing it changes (the group's photo, the user's profile picture, an album photo), and deleting the
/// object it replaced. `photoprep serve` takes every arriving photo in at once (`take`, when its last
/// byte arrived or when the sweeper finds a complete upload); the photo jobs use the same steps with a
/// resumable upload between preparing and recording.
public struct PhotoIntake: Sendable {
    let database: AppDatabase
    /// Where photos go: the storage this process owns (`take` needs it), or an upload server.
    public let destination: PhotoDestination
    /// The bounded pool the pipeline runs on (one thread per core), never the cooperative pool.
    let cpu: NIOThreadPool
    /// The threads of `cpu` and the memory the photos being prepared on them may hold together (nil: no
    /// bound beyond the threads). Every photo prepared on `cpu` must go through it.
    let memory: MemoryBudget?
    /// Replaced objects whose deletion failed, tried again by `deleteStaleObjects()`.
    public let stale: StaleObjects
    /// The `Authorization` header for deleting a user's objects (nil: none).
    let credentials: @Sendable (String) -> String?
    /// The thumbnails `take` makes and stores with each photo.
    let thumbnails: ThumbnailSizes
    /// Whether `take` makes each thumbnail as WebP too (when a WebP is the same picture in fewer bytes).
    let webpThumbnails: Bool
    /// The most pixels a photo may declare (checked from its header, before decoding).
    let maxPixels: Int
    /// What photos are encoded for (`PrepareOptions.quality`).
    let quality: QualityTarget
    /// Whether a photo's capture time (`PrepareReport.takenAt`) is recorded with it; never written to the stored file.
    let keepsCaptureTime: Bool
    /// The users' storage quotas `take` holds photos to (nil: none, as for a client's own records).
    public let quotas: Quotas?
    /// Asked by `take` before a photo is stored (nil: nobody).
    let reviewer: (any PhotoReviewer)?

    public init(
        database: AppDatabase, destination: PhotoDestination, cpu: NIOThreadPool = .singleton, memory: MemoryBudget? = nil, thumbnails: ThumbnailSizes = ThumbnailSizes(),
        maxPixels: Int = PrepareOptions(preset: .photo).maxPixels, quality: QualityTarget = .high, keepsCaptureTime: Bool = true,
        webpThumbnails: Bool = false, quota: StorageQuota? = nil, reviewer: (any PhotoReviewer)? = nil, credentials: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        quotas = quota.map { Quotas(database: database, standard: $0) }
        self.database = database
        self.destination = destination
        self.cpu = cpu
        self.memory = memory
        stale = StaleObjects(database: database)
        self.thumbnails = thumbnails
        self.maxPixels = maxPixels
        self.quality = quality
        self.keepsCaptureTime = keepsCaptureTime
        self.webpThumbnails = webpThumbnails
        self.credentials = credentials
        self.reviewer = reviewer
    }

    /// A photo taken in: its URL, and how long preparing it took.
    public struct Taken: Sendable {
        public var url: String
        public var preparing: Duration
    }

    /// Prepares the photo in `file` for `path` with its thumbnails, stores them, records them as `caller`'s
    /// and deletes what they replaced. Throws `.notAllowed` when the caller may not (or no longer) write there, `.storage` when
    /// storage, the database, the pool or the reviewer failed (nothing recorded; ask again), `.rejectedByReview` when the
    /// reviewer said no, and the photo's own error (`.unsupportedPhoto`, `.photoTooLarge`) when it cannot be stored. A
    /// photo the reviewer quarantines is stored and recorded as quarantined (`StoredPhoto.quarantine`).
    /// `focus`: where the photo's square thumbnails are centred (the client's, from the upload's metadata).
    public func take(_ file: String, path: StoragePath, caller: String, displayName: String?, focus: FocalPoint? = nil) async throws(ServiceError) -> Taken {
        guard let storage = destination.storage else { throw .invalidState("photos are taken in only where their storage is this process's") }
        let started = ContinuousClock.now
        let prepared = try await prepare(contentsOf: file, for: path, thumbnails: thumbnailOptions(for: path, focus: focus))
        let preparing = ContinuousClock.now - started
        try await authorize(caller: caller, writing: path)
        let bytes = prepared.jpeg.count + prepared.thumbnails.reduce(0) { $0 + $1.jpeg.count + ($1.webp?.count ?? 0) }
        try await quotas?.checkRoom(for: path, adding: Int64(bytes))
        var quarantine: String?
        switch await reviewer?.review(prepared, key: path.key, caller: caller, displayName: displayName) ?? .accept {
        case .accept: break
        case .reject(let reason): throw .rejectedByReview(reason)
        case .quarantine(let reason): quarantine = reason
        case .unavailable: throw .storage("the photo could not be reviewed; ask again shortly")
        }
        var stored = StoredPhotos.StoredObjects(
            photo: try await storage.put(prepared.jpeg, key: path.key), thumbnails: [], score: prepared.report.score,
            placeholder: prepared.report.placeholder, takenAt: keepsCaptureTime ? prepared.report.takenAt : nil, focus: focus, quarantine: quarantine)
        stored.thumbnails = try await store(prepared.thumbnails, of: path, in: storage)
        let objects = stored, quota = quotas?.standard
        let replaced: [String]
        do {
            replaced = try await database.write { db in
                try await Self.record(caller: caller, displayName: displayName, path: path, stored: objects, quota: quota, db)
            }
        } catch .overQuota(let detail) {
            // Another photo of the same owner took the room since `checkRoom`: this one's objects (under a key that held
            // nothing: `Quotas.check`) go.
            for object in objects.locations { await deleteReplaced(object, caller: caller) }
            throw .overQuota(detail)
        }
        // The record points at the new photo already: deleting the old one leaves no broken window.
        for object in replaced { await deleteReplaced(object, caller: caller) }
        return Taken(url: stored.photo.location, preparing: preparing)
    }

    // MARK: - The steps

    /// The thumbnails a photo at `path` gets: its sizes, squares for avatars (centred on `focus`), WebP beside.
    public struct ThumbnailOptions: Sendable {
        public var edges: [Int]
        public var square: Bool
        public var focus: FocalPoint?
        public var webp: Bool

        public init(edges: [Int] = [], square: Bool = false, focus: FocalPoint? = nil, webp: Bool = false) {
            (self.edges, self.square, self.focus, self.webp) = (edges, square, focus, webp)
        }
    }

    func thumbnailOptions(for path: StoragePath, focus: FocalPoint?) -> ThumbnailOptions {
        ThumbnailOptions(edges: thumbnails.edges(for: path), square: thumbnails.square(for: path), focus: focus, webp: webpThumbnails)
    }

    /// Puts the thumbnails (and their WebPs) of the photo at `path`.
    private func store(_ thumbnails: [Thumbnail], of path: StoragePath, in storage: any PhotoStorage) async throws(ServiceError) -> StoredPhotos.StoredThumbnails {
        var stored: StoredPhotos.StoredThumbnails = []
        for thumbnail in thumbnails {
            let object = try await storage.put(thumbnail.jpeg, key: path.thumbnailKey(edge: thumbnail.edge))
            var webp: StoredPhotos.StoredObject?
            if let bytes = thumbnail.webp { webp = try await storage.put(bytes, key: path.webpThumbnailKey(edge: thumbnail.edge), contentType: "image/webp") }
            stored.append((thumbnail.edge, thumbnail.width, thumbnail.height, object, webp))
        }
        return stored
    }

    /// Centres the square thumbnails of the photo stored at `path` on `focus` (nil: on what the attention rule picks)
    /// — its owner's photos, a group's by its admins (`notAllowed` otherwise; `invalidState` when nothing is stored
    /// there). They are made again from the stored photo and put over the old ones; the photo gets a new download token,
    /// so that no browser keeps showing the old squares from its cache (its URLs until now stop working).
    public func refocus(_ path: StoragePath, focus: FocalPoint?, caller: String) async throws(ServiceError) -> StoredPhoto {
        guard let storage = destination.storage else { throw .invalidState("photos are refocused only where their storage is this process's") }
        try await authorize(caller: caller, writing: path)
        let options = thumbnailOptions(for: path, focus: focus)
        guard options.square, !options.edges.isEmpty else { throw .invalidState("\(path.key) has no square thumbnails to centre") }
        guard let photo = try await database.read({ db in try await StoredPhotos.photo(path.key, db) }) else {
            throw .invalidState("there is no photo at \(path.key) yet")
        }
        guard let bytes = try await storage.bytes(key: path.key, location: photo.location) else { throw .storage("\(path.key) is not in storage") }
        // The intake prepares files (read on the pool, under the memory budget): the stored photo, fetched, is one.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("photoprep-refocus-\(randomUUID()).jpg")
        defer { try? FileManager.default.removeItem(at: file) }
        do { try Data(bytes).write(to: file) } catch { throw .storage("cannot write a temporary file: \(error)") }
        let prepared = try await prepare(contentsOf: file.path, for: path, thumbnails: options)
        let thumbnails = try await store(prepared.thumbnails, of: path, in: storage)
        let (refocused, unused) = try await database.write { db in
            guard var current = try await StoredPhotos.photo(path.key, db), current.sha256 == photo.sha256 else {
                throw ServiceError.invalidState("the photo at \(path.key) was replaced meanwhile; centre the new one")
            }
            let unused = try await StoredPhotos.replaceThumbnails(key: path.key, with: thumbnails, db)
            current.focus = focus?.description
            current.token = StoredPhotos.newToken()
            try await db.update("storedPhoto").set("focus", to: current.focus).set("token", to: current.token).where("key", .equal, path.key).run()
            return (current, unused)
        }
        for object in unused { await deleteReplaced(object, caller: caller) }
        return refocused
    }

    /// May `caller` write `path`? The storage rules, with group admins read from the database.
    public func authorize(caller: String, writing path: StoragePath) async throws(ServiceError) {
        var admin = false
        if case .groupPhoto(let group) = path {
            admin = try await database.read { db in try await Users.isAdmin(caller, of: group, db) }
        }
        try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
    }

    /// The photo in `file` prepared with the path's preset on the bounded pool — one that already
    /// complies passes through byte for byte — with the `thumbnails` asked for, and checked against the
    /// path's limits.
    public func prepare(contentsOf file: String, for path: StoragePath, thumbnails: ThumbnailOptions = ThumbnailOptions()) async throws(ServiceError) -> PreparedPhoto {
        var options = PrepareOptions(preset: path.preset)
        options.thumbnails = thumbnails.edges
        options.webpThumbnails = thumbnails.webp
        options.squareThumbnails = thumbnails.square
        options.focus = thumbnails.focus
        options.maxPixels = maxPixels
        options.quality = quality
        let pipeline = PhotoPipeline(options: options)
        let result: Result<PreparedPhoto, PhotoPrepError>
        do {
            let prepare = { @Sendable (header: PhotoPipeline.Header?) async throws -> Result<PreparedPhoto, PhotoPrepError> in
                try await cpu.runIfActive {
                    defer { if let header { memory?.giveBackFreedMemory(after: header.estimate) } }
                    do throws(PhotoPrepError) { return .success(try pipeline.prepare(contentsOf: file, header: header)) } catch { return .failure(error) }
                }
            }
            if let memory {
                // The header is read off the pipeline's threads, so that the photo waits for them knowing its size.
                let header = try await NIOThreadPool.singleton.runIfActive { pipeline.header(contentsOf: file) }
                result = try await memory.run(estimate: header?.estimate ?? 0) { try await prepare(header) }
            } else {
                result = try await prepare(nil)
            }
        } catch is CancellationError {
            throw .storage("preparing the photo was cancelled")
        } catch {
            throw .storage("the pipeline's threads are shut down: \(error)")
        }
        switch result {
        case .success(let prepared):
            try StorageRules.checkUpload(prepared.jpeg, to: path)
            return prepared
        case .failure(var error):
            error.file = nil  // where this process keeps it is nobody else's business (the message goes to clients)
            throw .unsupportedPhoto("the photo cannot be prepared: \(error)")
        }
    }

    /// What storing a photo changes, inside the caller's transaction — for photos arriving at the server
    /// and for the photo jobs alike. The caller is added as a user when the store does not know them yet
    /// (their id comes from a verified token; `displayName` from its `name` claim, if any). A group's
    /// photo is re-checked here: an admin removed meanwhile changes nothing. The photo gets its version
    /// and a new download token (`StoredPhotos`); what it replaced loses its own. Returns the objects the
    /// photo replaces — a previous profile picture under another name, thumbnails not overwritten — for
    /// the caller to delete once this transaction committed. With a `quota` (the server's setting), the photo must fit
    /// in its owner's (`Quotas.check`), or `.overQuota` is thrown and nothing is recorded.
    static func record(
        caller: String, displayName: String?, path: StoragePath, stored: StoredPhotos.StoredObjects, quota: StorageQuota? = nil, at date: Date = Date(),
        _ db: any SQLDatabase
    ) async throws -> [String] {
        // Added when unknown, in one statement (a known user's row is left as it is).
        let name = displayName.flatMap { try? NameRules.displayName($0) } ?? caller
        try await db.insert(into: "user").model(User(id: caller, displayName: name)).ignoringConflicts().run()
        let replacing = quota == nil ? false : try await Quotas.lock(path, db)
        var (replaced, existed) = try await StoredPhotos.record(key: path.key, stored: stored, by: caller, at: date, db)
        // The storage rules once more, in the transaction that records: an admin removed meanwhile changes nothing.
        var admin = false
        if case .groupPhoto(let group) = path { admin = try await Users.isAdmin(caller, of: group, db) }
        try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
        let subject = Outbox.subject(of: path)
        try await Outbox.record(
            existed ? .photoReplaced : .photoStored, subject: subject,
            data: [
                "key": path.key, "owner": path.owner, "size": stored.photo.content.size, "sha256": stored.photo.content.sha256, "score": stored.score,
                "thumbnails": stored.thumbnails.map(\.edge), "by": caller, "quarantine": stored.quarantine,
            ], at: date, db)
        switch path {
        case .groupPhoto(let group):
            try await db.update("chatGroup").set("photoState", to: PhotoState.done.rawValue)
                .set("photoError", to: SQLLiteral.null).set("updatedAt", to: date).where("id", .equal, group).run()
            try await Outbox.record(.groupPhotoChanged, subject: subject, data: ["groupId": group, "key": path.key, "by": caller], at: date, db)
        case .profileImage:
            let old = try await Users.find(caller, db)
            try await db.update("user").set("profilePhotoKey", to: path.key).where("id", .equal, caller).run()
            try await Outbox.record(.profilePhotoChanged, subject: subject, data: ["userId": caller, "key": path.key], at: date, db)
            if let oldKey = old?.profilePhotoKey, oldKey != path.key {
                let forgotten = try await StoredPhotos.forget(key: oldKey, db)
                replaced += forgotten.all
                if forgotten.photo != nil { try await Outbox.record(.photoDeleted, subject: subject, data: ["key": oldKey, "owner": caller, "by": caller], at: date, db) }
            }
        case .userPhoto(let user, let album, _):
            // The same key again replaces that album photo (an album job's record has its key already); a new key is a new photo.
            var id = try await db.update("albumPhoto").set("state", to: PhotoState.done.rawValue)
                .where("key", .equal, path.key).returning("id").first(decodingColumn: "id", as: String.self)
            if id == nil {
                let photo = AlbumPhoto(id: randomUUID(), userId: user, album: album, key: path.key, state: .done, createdAt: date)
                try await db.insert(into: "albumPhoto").model(photo).run()
                id = photo.id
            }
            if !existed {
                try await Outbox.record(.albumPhotoAdded, subject: subject, data: ["userId": user, "album": album, "photoId": id, "key": path.key], at: date, db)
            }
        }
        if let quota { try await Quotas.check(path, replacing: replacing, standard: quota, db) }
        return replaced
    }

    /// Deletes an object a newer photo replaced, trying `attempts` times; one that still cannot be deleted
    /// is kept in `stale` and tried again by `deleteStaleObjects()`.
    public func deleteReplaced(_ url: String, caller: String, attempts: Int = 3) async {
        await stale.delete(url, caller: caller, attempts: attempts) { url in try await delete(url, caller: caller) }
    }

    /// Tries once more to delete every replaced object that could not be deleted before.
    public func deleteStaleObjects() async {
        await stale.retryAll { url, caller in try await delete(url, caller: caller) }
    }

    /// Deletes the object at `url` with `caller`'s credentials.
    public func delete(_ url: String, caller: String) async throws(ServiceError) {
        try await destination.delete(url, authorization: credentials(caller))
    }
}
