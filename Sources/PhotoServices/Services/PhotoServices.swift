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
        jobs = PhotoJobs(
            store: JobStore(database: database, destination: intake.destination.name), intake: intake,
            staging: stateFolder.appendingPathComponent("staging"), lease: lease)
        users = UserDirectory(database: database)
        groups = GroupService(database: database, jobs: jobs)
        profiles = ProfileService(database: database, jobs: jobs)
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

/// A photo handed to a service: bytes in memory or a file. JPEG, PNG, HEIC/HEIF, AVIF or WebP.
public enum PhotoInput: Sendable {
    case bytes([UInt8])
    case file(String)

    /// The bytes, checked by their content to be in a format the pipeline decodes.
    func load() throws(ServiceError) -> [UInt8] {
        let bytes: [UInt8]
        switch self {
        case .bytes(let data):
            bytes = data
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { throw .unsupportedPhoto("\(path): cannot read the file") }
            bytes = [UInt8](data)
        }
        do {
            _ = try ImageFormat.sniff(bytes)
        } catch {
            throw .unsupportedPhoto("\(error)")
        }
        return bytes
    }
}

/// Users: the identities every call names.
public struct UserDirectory: Sendable {
    let database: AppDatabase

    /// Adds (or renames) a user.
    @discardableResult
    public func add(id: String, displayName: String, email: String? = nil) async throws(ServiceError) -> User {
        let id = try StorageRules.validated(id, "user id")
        let displayName = try NameRules.displayName(displayName)
        return try await database.write { db in
            if var user = try await Users.find(id, db) {
                user.displayName = displayName
                user.email = email ?? user.email
                try await db.update("user").set("displayName", to: user.displayName).set("email", to: user.email).where("id", .equal, id).run()
                return user
            }
            let user = User(id: id, displayName: displayName, email: email)
            try await db.insert(into: "user").model(user).run()
            return user
        }
    }

    public func user(_ id: String) async throws(ServiceError) -> User? {
        try await database.read { db in try await Users.find(id, db) }
    }

    /// Changes a known user's display name (the same rules as `add`).
    @discardableResult
    public func rename(_ id: String, to displayName: String) async throws(ServiceError) -> User {
        let displayName = try NameRules.displayName(displayName)
        return try await database.write { db in
            guard var user = try await Users.find(id, db) else { throw ServiceError.notFound("user \(id)") }
            user.displayName = displayName
            try await db.update("user").set("displayName", to: displayName).where("id", .equal, id).run()
            return user
        }
    }

    /// Users whose display name starts with `prefix` (ignoring ASCII case), never `excluding` (the caller),
    /// by name (ignoring ASCII case) then id, at most `limit`, after the user `after` (the last one of the previous page).
    public func search(prefix: String, excluding: String, limit: Int = 50, after: User? = nil) async throws(ServiceError) -> [User] {
        let limit = max(1, min(limit, 200))
        let pattern = prefix.lowercasedASCII.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        // lower() on both databases folds ASCII only here (SQLite's always; PostgreSQL's in the C locale the
        // cluster is made with), and LIKE on the folded name is the same on both.
        let name = SQLFunction("lower", args: SQLColumn("displayName"))
        let matches: SQLQueryString = "\(bind: pattern) ESCAPE '\\'"
        return try await database.read { db in
            var query = db.select().columns("*").from("user")
                .where(SQLBinaryExpression(name, .like, matches))
                .where("id", .notEqual, excluding)
            if let after {
                let afterName = after.displayName.lowercasedASCII
                query = query.where { page in
                    page.where(name, .greaterThan, SQLBind(afterName))
                        .orWhere { $0.where(name, .equal, SQLBind(afterName)).where("id", .greaterThan, after.id) }
                }
            }
            return try await query.orderBy(name).orderBy("id").limit(limit).all(decoding: User.self)
        }
    }
}

/// User lookups inside other services' transactions.
enum Users {
    static func find(_ id: String, _ db: any SQLDatabase) async throws -> User? {
        try await db.select().columns("*").from("user").where("id", .equal, id).first(decoding: User.self)
    }

    /// Every id in `ids` names a known user; the unknown ones are listed in the error.
    static func require(_ ids: [String], _ db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        let known = Set(try await db.select().column("id").from("user").where("id", .in, ids).all(decodingColumn: "id", as: String.self))
        let unknown = ids.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw ServiceError.unknownUsers(unknown) }
    }

    static func isAdmin(_ user: String, of group: String, _ db: any SQLDatabase) async throws -> Bool {
        try await db.select().column("isAdmin").from("groupMember").where("groupId", .equal, group).where("userId", .equal, user)
            .first(decodingColumn: "isAdmin", as: Bool.self) ?? false
    }
}

extension String {
    /// A-Z to a-z, nothing else: what both databases' `lower()` does here.
    var lowercasedASCII: String {
        String(unicodeScalars.map { (65...90).contains($0.value) ? Character(Unicode.Scalar($0.value + 32)!) : Character($0) })
    }
}

/// Stages the caller's photo and the job that will prepare and upload it.
func newJob(
    kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, original: [UInt8], staging: URL,
    destination: String?, waitsFor: String? = nil
) throws(ServiceError) -> PhotoJob {
    let id = randomUUID()
    let originalPath = staging.appendingPathComponent("\(id).original").path
    // The caller's photo is copied: their file may go away before the job runs.
    // Owner-only: the original may carry GPS and serials until it is prepared (then it is deleted).
    do { try AtomicFile.write(original, to: originalPath, permissions: 0o600) } catch { throw .storage(error.message) }
    let now = Date()
    return PhotoJob(
        id: id, kind: kind, caller: caller, subject: subject, key: path.key, preset: path.preset.rawValue, originalPath: originalPath,
        preparedPath: nil, state: .pending, error: nil, attempts: 0, url: nil, uploadLocation: nil, uploadedBytes: 0, waitsFor: waitsFor, destination: destination, leaseOwner: nil,
        leaseExpiresAt: nil, createdAt: now, updatedAt: now)
}
