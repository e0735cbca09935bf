public import Foundation
import GRDB
import PhotoPrep
public import PhotoUpload
import PhotoFiles

/// The group-creation and profile-photo services on one database and one storage destination.
///
/// ```swift
/// let services = try PhotoServices(folder: dataFolder, destination: "file:///srv/storage")
/// let created = try await services.groups.createGroup(
///     creator: "u1", name: "Hiking", participants: ["u2", "u3"], photo: .file("summit.jpg"))
/// for await event in services.jobs.events(created.photoJob!) { print(event) }
/// ```
public final class PhotoServices: Sendable {
    public let database: AppDatabase
    public let jobs: PhotoJobs
    public let users: UserDirectory
    public let groups: GroupService
    public let profiles: ProfileService

    /// - Parameters:
    ///   - database: the app database (a file, or in memory).
    ///   - destination: where photos go: a tus endpoint or a local folder (`file://`).
    ///   - stateFolder: staged photos and the upload journal live here.
    ///   - environment: where an `s3://` destination finds its settings (nil: the process environment).
    ///   - credentials: the `Authorization` header for a user's uploads (e.g. `Bearer <token>`).
    public init(
        database: AppDatabase, destination: String, stateFolder: URL, upload: UploadConfiguration = UploadConfiguration(),
        environment: [String: String]? = nil, credentials: @escaping @Sendable (String) -> String? = { _ in nil }
    ) throws(ServiceError) {
        // Owner-only: staged photos and the journal of uploads in flight are nobody else's business.
        try? FileManager.default.createDirectory(at: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = upload
        configuration.keepsFinishedInJournal = true
        let uploader: Uploader
        do {
            uploader = try Uploader(
                destination: destination, configuration: configuration,
                journal: UploadJournal(folder: stateFolder.appendingPathComponent("uploads")), environment: environment)
        } catch {
            throw .invalidState("\(error)")
        }
        self.database = database
        jobs = PhotoJobs(database: database, uploader: uploader, staging: stateFolder.appendingPathComponent("staging"), credentials: credentials)
        users = UserDirectory(database: database)
        groups = GroupService(database: database, jobs: jobs)
        profiles = ProfileService(database: database, jobs: jobs)
    }

    /// The embedded defaults in one folder: `app.sqlite`, the local store `storage/`, and the state.
    public convenience init(folder: URL, destination: String? = nil, credentials: @escaping @Sendable (String) -> String? = { _ in nil }) throws(ServiceError) {
        try self.init(
            database: AppDatabase(path: folder.appendingPathComponent("app.sqlite").path),
            destination: destination ?? folder.appendingPathComponent("storage").absoluteString,
            stateFolder: folder.appendingPathComponent("state"), credentials: credentials)
    }
}

/// A photo handed to a service: bytes in memory or a file. JPEG or PNG.
public enum PhotoInput: Sendable {
    case bytes([UInt8])
    case file(String)

    /// The bytes, checked to be a JPEG or PNG by their content.
    func load() throws(ServiceError) -> [UInt8] {
        let bytes: [UInt8]
        switch self {
        case .bytes(let data):
            bytes = data
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { throw .unsupportedPhoto("\(path): cannot read the file") }
            bytes = [UInt8](data)
        }
        let format: ImageFormat
        do {
            format = try ImageFormat.sniff(bytes)
        } catch {
            throw .unsupportedPhoto("\(error)")
        }
        guard format == .jpeg || format == .png else { throw .unsupportedPhoto("\(format.rawValue) images are not supported (JPEG or PNG)") }
        return bytes
    }
}

/// Users: the identities every call names.
public struct UserDirectory: Sendable {
    let database: AppDatabase

    /// Adds (or renames) a user.
    @discardableResult
    public func add(id: String, displayName: String, email: String? = nil) throws(ServiceError) -> User {
        let id = try StorageRules.validated(id, "user id")
        let displayName = try NameRules.displayName(displayName)
        return try database.write { db in
            if var user = try User.fetchOne(db, key: id) {
                user.displayName = displayName
                user.email = email ?? user.email
                try user.update(db)
                return user
            }
            let user = User(id: id, displayName: displayName, email: email)
            try user.insert(db)
            return user
        }
    }

    public func user(_ id: String) throws(ServiceError) -> User? {
        try database.read { db in try User.fetchOne(db, key: id) }
    }

    /// Changes a known user's display name (the same rules as `add`).
    @discardableResult
    public func rename(_ id: String, to displayName: String) throws(ServiceError) -> User {
        let displayName = try NameRules.displayName(displayName)
        return try database.write { db in
            guard var user = try User.fetchOne(db, key: id) else { throw ServiceError.notFound("user \(id)") }
            user.displayName = displayName
            try user.update(db)
            return user
        }
    }

    /// Users whose display name starts with `prefix` (ignoring ASCII case), never `excluding` (the caller),
    /// by name (ignoring ASCII case) then id, at most `limit`, after the user `after` (the last one of the previous page).
    public func search(prefix: String, excluding: String, limit: Int = 50, after: User? = nil) throws(ServiceError) -> [User] {
        let limit = max(1, min(limit, 200))
        let pattern = prefix.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return try database.read { db in
            var sql = "SELECT * FROM user WHERE displayName LIKE ? ESCAPE '\\' AND id != ?"
            var arguments: StatementArguments = [pattern, excluding]
            if let after {
                sql += " AND (displayName > ? COLLATE NOCASE OR (displayName = ? COLLATE NOCASE AND id > ?))"
                arguments += [after.displayName, after.displayName, after.id]
            }
            sql += " ORDER BY displayName COLLATE NOCASE, id LIMIT ?"
            arguments += [limit]
            return try User.fetchAll(db, sql: sql, arguments: arguments)
        }
    }
}

extension Database {
    /// Every id in `ids` names a known user; the unknown ones are listed in the error.
    func requireUsers(_ ids: [String]) throws {
        var unknown: [String] = []
        for id in ids where try !User.exists(self, key: id) { unknown.append(id) }
        guard unknown.isEmpty else { throw ServiceError.unknownUsers(unknown) }
    }
}


/// Stages the caller's photo and the job that will prepare and upload it.
func newJob(
    kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, preset: PrepareOptions.Preset, original: [UInt8], staging: URL,
    waitsFor: String? = nil
) throws(ServiceError) -> PhotoJob {
    let id = UUID().uuidString.lowercased()
    let originalPath = staging.appendingPathComponent("\(id).original").path
    // The caller's photo is copied: their file may go away before the job runs.
    // Owner-only: the original may carry GPS and serials until it is prepared (then it is deleted).
    do { try AtomicFile.write(original, to: originalPath, permissions: 0o600) } catch { throw .storage(error.message) }
    let now = Date()
    return PhotoJob(
        id: id, kind: kind, caller: caller, subject: subject, key: path.key, preset: preset.rawValue, originalPath: originalPath,
        preparedPath: nil, state: .pending, error: nil, attempts: 0, url: nil, uploadLocation: nil, uploadedBytes: 0, waitsFor: waitsFor, claimedBy: nil,
        claimedAt: nil, createdAt: now, updatedAt: now)
}
