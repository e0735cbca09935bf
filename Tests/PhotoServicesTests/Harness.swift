import Foundation
import SQLKit
@testable import PhotoPrep
import PhotoServices
import PhotoUpload
import TestSupport

/// Services on a real database — an SQLite file in a temporary folder, or a new database on the
/// test process's throwaway PostgreSQL cluster when `PHOTOPREP_TEST_DATABASE=postgres` — uploading to
/// `destination` (default: the local store in the same folder), with users u1…u`users` ("User 1" …).
struct Harness {
    let folder: URL
    let services: PhotoServices
    let destination: String

    /// The user's `Authorization` header: an HS256 JWT, as the identity provider would hand the app.
    static func authorization(for user: String) -> String { "Bearer " + TestTokens.hs256(sub: user) }

    init(
        users: Int = 4, destination: String? = nil, upload: UploadConfiguration = UploadConfiguration(), folder: URL? = nil,
        lease: Duration = .seconds(30)
    ) async throws {
        self.folder = try folder ?? temporaryFolder()
        self.destination = destination ?? self.folder.appendingPathComponent("storage").absoluteString
        services = try PhotoServices(
            database: try await Self.database(in: self.folder), destination: self.destination,
            stateFolder: self.folder.appendingPathComponent("state"), upload: upload, lease: lease,
            credentials: { Harness.authorization(for: $0) })
        for i in 0..<users { try await services.users.add(id: "u\(i + 1)", displayName: "User \(i + 1)") }
    }

    /// The database the suite runs on: SQLite in `folder`, or PostgreSQL.
    /// On PostgreSQL the folder remembers its database, so a second harness on it (a "new process")
    /// finds the same data.
    static func database(in folder: URL, role: AppDatabase.Role = .services, also more: [SchemaMigration] = []) async throws -> AppDatabase {
        if PostgresCluster.selected {
            let file = folder.appendingPathComponent("postgres-url")
            if let url = try? String(contentsOf: file, encoding: .utf8) { return try await AppDatabase(postgres: url, role: role, also: more) }
            let url = try await PostgresCluster.shared().newDatabase()
            try url.write(to: file, atomically: true, encoding: .utf8)
            return try await AppDatabase(postgres: url, role: role, also: more)
        }
        return try await AppDatabase(path: folder.appendingPathComponent("app.sqlite").path, role: role, also: more)
    }

    var databasePath: String { folder.appendingPathComponent("app.sqlite").path }

    /// The local store's file for a key.
    func stored(_ key: String) -> [UInt8]? {
        FileManager.default.contents(atPath: folder.appendingPathComponent("storage").appendingPathComponent(key).path).map { [UInt8]($0) }
    }

    func count(_ table: String) async throws -> Int {
        try await services.database.count(table)
    }
}

/// Decodes a JPEG whole and strictly (TurboJPEG): its width and height.
func decodedSize(_ bytes: [UInt8]) throws -> (width: Int, height: Int) {
    let info = try SourceInfo.read(bytes, maxPixels: .max)
    let image = try Decoder.decodeJPEG(bytes, info: info, scale: 1, strict: true).image
    return (image.width, image.height)
}

func users(_ range: ClosedRange<Int>) -> [String] { range.map { "u\($0)" } }
