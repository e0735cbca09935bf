import Foundation
import PhotoServices
import Testing
import TestSupport

/// Two `photoprep serve` processes on one PostgreSQL database (the test process's throwaway cluster) and
/// one store: whichever instance a request reaches, it sees and changes the same users, groups and photos.
@Suite struct ServeScaleOutTests {
    struct TwoInstances {
        let a: PhotoServerProcess
        let b: PhotoServerProcess
        let database: AppDatabase
        let storage: URL
        let groupId: String
    }

    /// Seeds the shared database (u1 Ana, u2 Ben, u3 Cleo, and Ana's group "Hiking"), then starts two servers on it.
    static func start() async throws -> TwoInstances {
        let url = try await PostgresCluster.shared().newDatabase()
        let folder = try temporaryFolder()
        let storage = folder.appendingPathComponent("storage")
        let database = try await AppDatabase(postgres: url, role: .server)
        let services = try PhotoServices(database: database, destination: storage.absoluteString, stateFolder: folder.appendingPathComponent("state"))
        for (id, name) in [("u1", "Ana"), ("u2", "Ben"), ("u3", "Cleo")] { try await services.users.add(id: id, displayName: name) }
        let groupId = try await services.groups.createGroup(creator: "u1", name: "Hiking", participants: ["u2", "u3"]).group.id
        let arguments = ["--database", url, "--to", storage.path]
        let (a, b) = try await onThread { (try PhotoServerProcess(arguments: arguments), try PhotoServerProcess(arguments: arguments)) }
        return TwoInstances(a: a, b: b, database: database, storage: storage, groupId: groupId)
    }

    @Test func bothInstancesServeTheSameGroupsAndPhotos() async throws {
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        let u1 = TestTokens.hs256(sub: "u1")

        // A creation sent to A, then again (the same id) to B: one group, one message, two notifications.
        let id = UUID().uuidString.lowercased()
        let body: [String: Any] = ["id": id, "name": "Trip", "participants": ["u2", "u3"]]
        let first = try await ServeAPITests.call(two.a, "POST", "/v1/groups", token: u1, json: body)
        let again = try await ServeAPITests.call(two.b, "POST", "/v1/groups", token: u1, json: body)
        #expect(first.status == 201 && [200, 201].contains(again.status), "\(first.status) \(again.status)")
        #expect(try await two.database.count("chatGroup", where: "id", id) == 1)
        #expect(try await two.database.count("message", where: "groupId", id) == 1)
        #expect(try await two.database.count("notification", where: "groupId", id) == 2)
        // Renamed through B, read through A.
        #expect(try await ServeAPITests.call(two.b, "PATCH", "/v1/groups/\(id)", token: u1, json: ["name": "Road trip"]).status == 200)
        #expect(try await ServeAPITests.call(two.a, "GET", "/v1/groups/\(id)", token: u1).body["name"] as? String == "Road trip")

        // The group photo uploaded through A (the admin's right read from the shared database) is B's to show.
        let photoFile = try temporaryFolder().appendingPathComponent("photo.jpg").path
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: photoFile)
        let upload = try await onThread {
            try photoprepBlocking(
                ["upload", photoFile, "--to", two.a.endpoint, "--key-prefix", "group_photos/\(two.groupId)/",
                 "--state", try temporaryFolder().path],
                environment: ["PHOTOPREP_TOKEN": u1])
        }
        #expect(upload.status == 0, "\(upload.stderr)")
        let photo = try await ServeAPITests.call(two.b, "GET", "/v1/groups/\(two.groupId)/photo", token: u1)
        #expect(photo.status == 200 && (photo.body["url"] as? String)?.contains("/media/group_photos/\(two.groupId)/photo.jpg?") == true, "\(photo.body)")
        #expect(FileManager.default.fileExists(atPath: two.storage.appendingPathComponent("group_photos/\(two.groupId)/photo.jpg").path))
        // A non-admin is refused by either instance.
        let ben = TestTokens.hs256(sub: "u2")
        let refused = try await onThread {
            try photoprepBlocking(
                ["upload", photoFile, "--to", two.b.endpoint, "--key-prefix", "group_photos/\(two.groupId)/",
                 "--state", try temporaryFolder().path],
                environment: ["PHOTOPREP_TOKEN": ben])
        }
        #expect(refused.status != 0 && refused.stderr.contains("403"), "\(refused.stderr)")
    }

    /// 20 creations at once, alternating between the instances: 20 groups, each written whole once.
    @Test func concurrentCreationsThroughBothInstances() async throws {
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        let u1 = TestTokens.hs256(sub: "u1")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<20 {
                group.addTask {
                    let server = i % 2 == 0 ? two.a : two.b
                    return try await ServeAPITests.call(server, "POST", "/v1/groups", token: u1, json: ["name": "g\(i)", "participants": ["u2", "u3"]]).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses)")
        #expect(try await two.database.count("chatGroup") == 21)
        #expect(try await two.database.count("message") == 21)
        #expect(try await two.database.count("groupMember") == 63)
        #expect(try await two.database.count("notification") == 42)
    }
}
