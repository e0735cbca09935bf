import Foundation
import PhotoUpload
import Testing
import TestSupport

/// The built server storing in a moto bucket (`s3://photos/prod`), on SQLite or on a new PostgreSQL database (then
/// its uploads in progress are shared through the bucket too), reaching the bucket through a `FaultProxy` with
/// `faults` when given; `objects` reads the bucket directly.
struct BucketServer {
    let moto: MotoServer
    let proxy: FaultProxy?
    let server: PhotoServerProcess
    let objects: S3Objects
    /// The PostgreSQL database's URL (nil: SQLite, `app.sqlite` in the server's data folder).
    let database: String?

    /// An upload of `photo` to `key` created by u1 (Ana): its location, and the token that created it.
    func newUpload(_ key: String, of photo: [UInt8]) async throws -> (location: String, token: String) {
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
        return (try #require(created.header("Location"), "\(created)"), token)
    }

    static func start(database: String, faults: [String]? = nil, arguments: [String] = []) async throws -> BucketServer {
        let moto = try await onThread { try MotoServer() }
        try await moto.createBucket("photos")
        let proxy = try await onThread { try faults.map { try FaultProxy(upstream: moto.server.port, faults: $0) } }
        let url = database == "postgres" ? try await PostgresCluster.shared().newDatabase() : nil
        let databaseArguments = url.map { ["--database", $0] } ?? []
        let environment = moto.environment(endpoint: proxy.map { "http://127.0.0.1:\($0.server.port)" })
        let server = try await onThread { try PhotoServerProcess(arguments: ["--to", "s3://photos/prod"] + databaseArguments + arguments, environment: environment) }
        let objects = S3Objects(store: try S3Store(url: "s3://photos/prod", environment: moto.environment()))
        return BucketServer(moto: moto, proxy: proxy, server: server, objects: objects, database: url)
    }
}
