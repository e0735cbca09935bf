import Foundation
import PhotoUpload
import TestSupport

/// The built server storing in a moto bucket (`s3://photos/prod`), on SQLite or on a new PostgreSQL database (then
/// its uploads in progress are shared through the bucket too), reaching the bucket through a `FaultProxy` with
/// `faults` when given; `objects` reads the bucket directly.
struct BucketServer {
    let moto: MotoServer
    let proxy: FaultProxy?
    let server: PhotoServerProcess
    let objects: S3Objects

    static func start(database: String, faults: [String]? = nil) async throws -> BucketServer {
        let moto = try await onThread { try MotoServer() }
        try await moto.createBucket("photos")
        let proxy = try await onThread { try faults.map { try FaultProxy(upstream: moto.server.port, faults: $0) } }
        let databaseArguments = database == "postgres" ? ["--database", try await PostgresCluster.shared().newDatabase()] : []
        let environment = moto.environment(endpoint: proxy.map { "http://127.0.0.1:\($0.server.port)" })
        let server = try await onThread { try PhotoServerProcess(arguments: ["--to", "s3://photos/prod"] + databaseArguments, environment: environment) }
        let objects = S3Objects(store: try S3Store(url: "s3://photos/prod", environment: moto.environment()))
        return BucketServer(moto: moto, proxy: proxy, server: server, objects: objects)
    }
}
