import Foundation
import GRDB
@testable import PhotoPrep
import PhotoServices
import PhotoUpload
import TestSupport

/// Services on a real SQLite file in a temporary folder, uploading to `destination` (default: the
/// local store in the same folder), with users u1…u`users` ("User 1" …).
struct Harness {
    let folder: URL
    let services: PhotoServices
    let destination: String

    /// The user's `Authorization` header: an HS256 JWT, as the identity provider would hand the app.
    static func authorization(for user: String) -> String { "Bearer " + TestTokens.hs256(sub: user) }

    init(users: Int = 4, destination: String? = nil, upload: UploadConfiguration = UploadConfiguration(), folder: URL? = nil) throws {
        self.folder = try folder ?? temporaryFolder()
        self.destination = destination ?? self.folder.appendingPathComponent("storage").absoluteString
        services = try PhotoServices(
            database: AppDatabase(path: self.folder.appendingPathComponent("app.sqlite").path), destination: self.destination,
            stateFolder: self.folder.appendingPathComponent("state"), upload: upload,
            credentials: { Harness.authorization(for: $0) })
        try services.database.writer.write { db in
            for i in 0..<users { try User(id: "u\(i + 1)", displayName: "User \(i + 1)").insert(db) }
        }
    }

    var databasePath: String { folder.appendingPathComponent("app.sqlite").path }

    /// The local store's file for a key.
    func stored(_ key: String) -> [UInt8]? {
        FileManager.default.contents(atPath: folder.appendingPathComponent("storage").appendingPathComponent(key).path).map { [UInt8]($0) }
    }

    func count(_ table: String) throws -> Int {
        try services.database.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")! }
    }
}

/// The files in TestImages/ (see TestImages/PROVENANCE.md).
enum Fixture {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestImages")

    static func path(_ name: String) -> String { root.appendingPathComponent(name).path }
}

/// Decodes a JPEG whole and strictly (TurboJPEG): its width and height.
func decodedSize(_ bytes: [UInt8]) throws -> (width: Int, height: Int) {
    let info = try SourceInfo.read(bytes, maxPixels: .max)
    let image = try Decoder.decodeJPEG(bytes, info: info, scale: 1, strict: true).image
    return (image.width, image.height)
}

func users(_ range: ClosedRange<Int>) -> [String] { range.map { "u\($0)" } }
