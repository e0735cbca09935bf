import Foundation
import PhotoServer
import PhotoServices
import Testing
import TestSupport

/// Storage quotas: what a user may keep in their own folders (photos, and bytes with the thumbnails), checked when an
/// upload is created, before its photo is stored and in the transaction that records it; 413 with the quota and the
/// usage past it; `GET /v1/me/usage`; a user's own quota (`photoprep user quota`); deleting frees at once; uploads
/// finishing at once never go past it — on SQLite in process, on PostgreSQL with two servers.
@Suite struct ServeQuotaTests {
    /// What is stored for `user` in the storage folder `root`: photos (the files under their folders) and bytes (those
    /// with their thumbnails and WebPs).
    static func stored(for user: String, in root: URL) -> (photos: Int, bytes: Int64) {
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []).filter { file in
            var isFolder: ObjCBool = false
            return file.contains("/\(user)/") && FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path, isDirectory: &isFolder)
                && !isFolder.boolValue
        }
        let sizes = files.map { (try? FileManager.default.attributesOfItem(atPath: root.appendingPathComponent($0).path)[.size] as? Int64) ?? 0 }
        let photos = files.filter { $0.hasPrefix("user_photos/") || $0.hasPrefix("profile_images/") }
        return (photos.count, sizes.reduce(0, +))
    }

    static func usage(_ server: any HTTPCalls, token: String) async throws -> [String: Any] {
        let answer = try await ServeAPITests.call(server, "GET", "/v1/me/usage", token: token)
        #expect(answer.status == 200, "\(answer.exchange)")
        return answer.body
    }

    /// Two photos allowed: two album photos are stored and counted (bytes as the storage holds them); a third is
    /// refused at creation with 413 naming the quota and the usage; the same key again replaces (no new photo); a
    /// deleted photo frees its place at once.
    @Test func photosPastTheQuotaAreRefusedAndDeletingFreesThem() async throws {
        try await SeededRouter.run(configure: { $0.quota = StorageQuota(bytes: 1 << 30, photos: 2) }) { server in
            let token = TestTokens.hs256(sub: "u1")
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            for name in ["a", "b"] {
                let stored = try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/\(name).jpg", bytes: photo, token: token)
                #expect(stored.status == 201 && stored.header("Upload-Offset") == String(photo.count), "\(stored)")
            }
            let storage = server.data.appendingPathComponent("storage")
            let held = Self.stored(for: "u1", in: storage)
            #expect(held.photos == 2)
            var usage = try await Self.usage(server, token: token)
            #expect(usage["photos"] as? Int == 2 && (usage["bytes"] as? NSNumber)?.int64Value == held.bytes, "\(usage) against \(held)")
            #expect((usage["quota"] as? [String: Any])?["photos"] as? Int == 2, "\(usage)")

            let third = try await ServeRulesTests.create(server, key: "user_photos/u1/trip/c.jpg", length: photo.count, token: token)
            #expect(third.status == 413, "\(third)")
            #expect(third.body.trimmingCharacters(in: .newlines) == "over quota: u1 stores 2 photos in \(held.bytes) bytes: the quota of 2 photos is used up", "\(third.body)")
            #expect(Self.stored(for: "u1", in: storage).photos == 2)

            let again = try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/b.jpg", bytes: photo, token: token)
            #expect(again.status == 201, "the same key replaces: \(again)")

            let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: token)
            let first = try #require((album.body["photos"] as? [[String: Any]])?.first { $0["key"] as? String == "user_photos/u1/trip/a.jpg" }?["id"] as? String)
            let deleted = try await ServeAPITests.call(server, "DELETE", "/v1/albums/trip/photos/\(first)", token: token)
            #expect(deleted.status == 204, "\(deleted.exchange)")
            usage = try await Self.usage(server, token: token)
            #expect(usage["photos"] as? Int == 1 && (usage["bytes"] as? NSNumber)?.int64Value == Self.stored(for: "u1", in: storage).bytes, "\(usage)")
            let freed = try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/c.jpg", bytes: photo, token: token)
            #expect(freed.status == 201, "\(freed)")
        }
    }

    /// Creation holds the declared length against the bytes left, counting the photo as large as it may be stored:
    /// the upload itself (38785 bytes) when it is smaller than the preset's budget, the budget (5 MiB for an album
    /// photo) when it is larger. Refused: 413 with the quota, the usage and what the upload may store; nothing created.
    @Test func anUploadThatCouldNotFitIsRefusedWhenItIsCreated() async throws {
        try await SeededRouter.run { server in
            let quotas = Quotas(database: try await server.database())
            let token = TestTokens.hs256(sub: "u2")
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            try await quotas.set(StorageQuota(bytes: Int64(photo.count) - 1, photos: 100), for: "u2")
            let small = try await ServeRulesTests.create(server, key: "profile_images/u2/me.jpg", length: photo.count, token: token)
            #expect(small.status == 413, "\(small)")
            #expect(
                small.body.trimmingCharacters(in: .newlines)
                    == "over quota: u2 stores 0 photos in 0 bytes; an upload of \(photo.count) bytes may store up to \(photo.count) bytes: with it 1 photos in \(photo.count) bytes, over the quota of \(photo.count - 1) bytes",
                "\(small.body)")
            #expect(small.header("Location") == nil)

            let budget = 5 * 1024 * 1024
            try await quotas.set(StorageQuota(bytes: Int64(budget) - 1, photos: 100), for: "u2")
            let large = try await ServeRulesTests.create(server, key: "user_photos/u2/trip/big.heic", length: 8_000_000, token: token)
            #expect(large.status == 413 && large.body.contains("an upload of 8000000 bytes may store up to \(budget) bytes:"), "\(large)")
            try await quotas.set(StorageQuota(bytes: Int64(budget), photos: 100), for: "u2")
            let fits = try await ServeRulesTests.create(server, key: "user_photos/u2/trip/big.heic", length: 8_000_000, token: token)
            #expect(fits.status == 201, "as large as its budget, it fits: \(fits)")
        }
    }

    /// A quota of the user's own (set as `photoprep user quota` does) that holds the upload but not the prepared photo
    /// with its thumbnails: the upload is created and its last byte is answered 413 with the quota and the usage;
    /// nothing is stored, the upload is gone, and the usage says the user's quota. A group's photo counts for nobody.
    @Test func aPhotoLargerThanTheBytesLeftIsRefusedWhenItArrives() async throws {
        try await SeededRouter.run { server in
            try await Quotas(database: server.database()).set(StorageQuota(bytes: 40000, photos: 100), for: "u2")
            let token = TestTokens.hs256(sub: "u2")
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            let created = try await ServeRulesTests.create(server, key: "profile_images/u2/me.jpg", length: photo.count, token: token)
            let location = try #require(created.header("Location"), "\(created)")
            let answer = try await ServeRulesTests.patch(server, location, offset: 0, body: photo, token: token)
            #expect(answer.status == 413, "\(answer)")
            #expect(answer.body.contains("over the quota of 40000 bytes") && answer.body.contains("u2 stores 0 photos in 0 bytes; with this one 1 photos in"), "\(answer.body)")
            #expect(Self.stored(for: "u2", in: server.data.appendingPathComponent("storage")).bytes == 0)
            #expect(try await ServeRulesTests.head(server, location, token: token).status == 404)
            let usage = try await Self.usage(server, token: token)
            #expect(usage["photos"] as? Int == 0 && (usage["quota"] as? [String: Any])?["bytes"] as? Int == 40000, "\(usage)")
            let admin = TestTokens.hs256(sub: "u1")
            try await Quotas(database: server.database()).set(StorageQuota(bytes: 1, photos: 1), for: "u1")
            let group = try await ServeRulesTests.createWithUpload(server, key: "group_photos/\(server.groupId)/photo.jpg", bytes: photo, token: admin)
            #expect(group.status == 201, "a group's photo is nobody's: \(group)")
        }
    }

    /// `--quota-bytes 0 --quota-photos 0`: no quotas, a user's own ignored too; the usage is still said, its quota null.
    @Test func aServerWithoutQuotasStoresEverythingAndStillSaysTheUsage() async throws {
        try await SeededRouter.run(configure: { $0.quota = nil }) { server in
            try await Quotas(database: server.database()).set(StorageQuota(bytes: 1, photos: 1), for: "u1")
            let token = TestTokens.hs256(sub: "u1")
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            for name in ["a", "b"] {
                let stored = try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/\(name).jpg", bytes: photo, token: token)
                #expect(stored.status == 201, "\(stored)")
            }
            let usage = try await Self.usage(server, token: token)
            #expect(usage["photos"] as? Int == 2 && usage["quota"] is NSNull, "\(usage)")
        }
    }

    /// Twenty photos by one user finishing at once with room for five: five stored, fifteen refused with 413, the
    /// storage holding exactly the five (the refused ones' objects deleted) and the usage counting them.
    @Test func uploadsFinishingAtOnceNeverGoPastTheQuota() async throws {
        try await SeededRouter.run(configure: { $0.quota = StorageQuota(bytes: 1 << 30, photos: 5) }) { server in
            let statuses = try await Self.raceTwenty(servers: [server], token: TestTokens.hs256(sub: "u1"))
            #expect(statuses.filter { $0 == 201 }.count == 5 && statuses.filter { $0 == 413 }.count == 15, "\(statuses)")
            let held = Self.stored(for: "u1", in: server.data.appendingPathComponent("storage"))
            #expect(held.photos == 5)
            let usage = try await Self.usage(server, token: TestTokens.hs256(sub: "u1"))
            #expect(usage["photos"] as? Int == 5 && (usage["bytes"] as? NSNumber)?.int64Value == held.bytes, "\(usage) against \(held)")
        }
    }

    /// The same on PostgreSQL with two servers sharing the database and the storage folder, the uploads spread over
    /// both: the quota holds across instances.
    @Test func twoServersOnPostgreSQLKeepTheQuotaTogether() async throws {
        let url = try await PostgresCluster.shared().newDatabase()
        let shared = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: shared) }
        let arguments = ["--database", url, "--to", shared.path, "--quota-photos", "5"]
        let first = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { first.stop() }
        let second = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { second.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let statuses = try await Self.raceTwenty(servers: [first, second], token: token)
        #expect(statuses.filter { $0 == 201 }.count == 5 && statuses.filter { $0 == 413 }.count == 15, "\(statuses) \(first.log.suffix(2000))")
        let held = Self.stored(for: "u1", in: shared)
        #expect(held.photos == 5)
        let usage = try await Self.usage(second, token: token)
        #expect(usage["photos"] as? Int == 5 && (usage["bytes"] as? NSNumber)?.int64Value == held.bytes, "\(usage) against \(held)")
        let over = try await ServeRulesTests.create(first, key: "user_photos/u1/trip/late.jpg", length: 1000, token: token)
        #expect(over.status == 413, "\(over)")
    }

    /// Twenty album photos of one user, each in one request (creation with upload), all at once, spread over `servers`:
    /// the statuses.
    static func raceTwenty(servers: [any HTTPCalls], token: String) async throws -> [Int] {
        let photo = try Fixture.bytes("orientation/landscape_1.jpg")
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                let server = servers[index % servers.count]
                group.addTask {
                    try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/p\(index).jpg", bytes: photo, token: token).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}
