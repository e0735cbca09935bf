import Foundation
import SQLKit
@testable import PhotoServices
import Synchronization
import Testing
import TestSupport

/// What the read path reads (on SQLite and PostgreSQL alike): a stored photo's version, token and
/// thumbnails, one statement per request; a new photo or a regenerated token is a new token.
@Suite struct StoredPhotosTests {
    static func objects(_ name: String, thumbnails: [Int]) -> StoredPhotos.StoredObjects {
        StoredPhotos.StoredObjects(
            photo: .init(location: "file:///s/\(name)", content: .init(of: Array(name.utf8))),
            thumbnails: thumbnails.map { edge in
                (
                    edge, edge, edge / 2, StoredPhotos.StoredObject(location: "file:///t/\(edge)/\(name)", content: .init(of: Array("\(edge)\(name)".utf8))),
                    // The 256 px one has a WebP.
                    edge == 256 ? StoredPhotos.StoredObject(location: "file:///w/\(edge)/\(name)", content: .init(of: Array("w\(edge)\(name)".utf8))) : nil
                )
            })
    }

    @Test func photosThumbnailsAndTokens() async throws {
        let h = try await Harness(users: 3)
        let photos = StoredPhotos(database: h.services.database)
        let path = StoragePath.profileImage(userId: "u1", file: "a.jpg")
        _ = try await h.services.database.write { db in
            try await PhotoIntake.record(caller: "u1", displayName: nil, path: path, stored: Self.objects("a", thumbnails: [128, 256]), db)
        }
        let whole = try #require(try await photos.media(path.key, edge: nil))
        #expect(whole.photo.location == "file:///s/a" && whole.photo.sha256 == StoredPhotos.Content(of: Array("a".utf8)).sha256 && whole.object == nil)
        #expect(whole.photo.token.count == 32 && whole.photo.token.allSatisfy(\.isHexDigit))
        let small = try #require(try await photos.media(path.key, edge: 128))
        #expect(small.object?.location == "file:///t/128/a" && small.object?.width == 128 && small.object?.height == 64 && small.photo == whole.photo)
        #expect(try await photos.media(path.key, edge: 64)?.object == nil, "a size that was not made")
        let large = try #require(try await photos.media(path.key, edge: 256)?.object)
        #expect(small.object?.webpLocation == nil && large.webpLocation == "file:///w/256/a" && large.webpSize == 5)
        #expect(large.webpSha256 == StoredPhotos.Content(of: Array("w256a".utf8)).sha256)
        #expect(try await photos.media("profile_images/u1/b.jpg", edge: nil) == nil)

        // Only the owner regenerates the token; the old one is gone.
        await #expect(throws: ServiceError.self) { try await photos.regenerateToken(caller: "u2", path) }
        let regenerated = try await photos.regenerateToken(caller: "u1", path)
        let current = try await photos.media(path.key, edge: nil)
        #expect(regenerated.token != whole.photo.token && current?.photo.token == regenerated.token)

        // A new picture under another name: the old one and its thumbnails are forgotten and returned for deletion.
        let replaced = try await h.services.database.write { db in
            try await PhotoIntake.record(
                caller: "u1", displayName: nil, path: .profileImage(userId: "u1", file: "b.jpg"), stored: Self.objects("b", thumbnails: [128]), db)
        }
        #expect(Set(replaced) == ["file:///s/a", "file:///t/128/a", "file:///t/256/a", "file:///w/256/a"])
        #expect(try await photos.media(path.key, edge: nil) == nil)
        #expect(try await photos.media("profile_images/u1/b.jpg", edge: 128)?.object?.location == "file:///t/128/b")
    }

    /// Records are reused from memory between writes: a write of this process is seen at once, one of
    /// another process (another instance) within `StoredPhotos.Recent.lifetime`.
    @Test func recentRecordsAndChangesMadeElsewhere() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("db.sqlite").path
        let here = try await AppDatabase(path: file, role: .services)
        let elsewhere = try await AppDatabase(path: file, role: .services)
        let path = StoragePath.profileImage(userId: "u1", file: "a.jpg")
        _ = try await here.write { db in
            try await PhotoIntake.record(caller: "u1", displayName: nil, path: path, stored: Self.objects("a", thumbnails: [128]), db)
        }
        // Time passes when the test says so: a slow read on a busy machine does not outlive the lifetime.
        let clock = ManualTime()
        let photos = StoredPhotos(database: here, now: clock.now)
        let first = try #require(try await photos.media(path.key, edge: nil)).photo
        #expect(photos.remembered(path.key, edge: nil)?.photo.token == first.token, "kept in memory once read")
        #expect(try await photos.media(path.key, edge: 128)?.object?.location == "file:///t/128/a")

        // Another instance regenerates the token: seen here within the lifetime, whatever was kept.
        let regenerated = try await StoredPhotos(database: elsewhere).regenerateToken(caller: "u1", path)
        #expect(photos.remembered(path.key, edge: nil)?.photo.token == first.token, "not read again within the lifetime")
        clock.advance(by: StoredPhotos.Recent.lifetime)
        #expect(try await photos.media(path.key, edge: nil)?.photo.token == regenerated.token)
        #expect(regenerated.token != first.token)

        // This process replaces the photo: seen at once, thumbnails included.
        _ = try await here.write { db in
            try await PhotoIntake.record(caller: "u1", displayName: nil, path: path, stored: Self.objects("b", thumbnails: [256]), db)
        }
        #expect(photos.remembered(path.key, edge: nil) == nil, "a write of this process forgets what was kept")
        let now = try #require(try await photos.media(path.key, edge: nil)).photo
        #expect(now.location == "file:///s/b" && now.token != regenerated.token)
        #expect(try await photos.media(path.key, edge: 128)?.object == nil)
        #expect(try await photos.media(path.key, edge: 256)?.object?.location == "file:///t/256/b")
        // Forgotten by this process: gone at once.
        _ = try await here.write { db in try await StoredPhotos.forget(key: path.key, db) }
        #expect(try await photos.media(path.key, edge: nil) == nil)
    }

    /// A key with no photo is remembered as having none, exactly as a photo is remembered: asking for it again
    /// does not read the database (so its answer takes the time a wrong token's does), and what changes it —
    /// a write of this process at once, another instance's within the lifetime — is seen as for a photo.
    @Test func keysWithoutAPhotoAreRememberedToo() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("db.sqlite").path
        let here = try await AppDatabase(path: file, role: .services)
        let elsewhere = try await AppDatabase(path: file, role: .services)
        let clock = ManualTime()
        let photos = StoredPhotos(database: here, now: clock.now)
        let path = StoragePath.profileImage(userId: "u1", file: "a.jpg")
        #expect(try await photos.media(path.key, edge: nil) == nil)
        // Stored by another instance: still none here within the lifetime (not read again), seen after it.
        _ = try await elsewhere.write { db in
            try await PhotoIntake.record(caller: "u1", displayName: nil, path: path, stored: Self.objects("a", thumbnails: []), db)
        }
        #expect(try await photos.media(path.key, edge: nil) == nil, "remembered as none: the database not read again")
        clock.advance(by: StoredPhotos.Recent.lifetime)
        #expect(try await photos.media(path.key, edge: nil)?.photo.location == "file:///s/a")
        // Forgotten by this process, then stored by it: each seen at once.
        _ = try await here.write { db in try await StoredPhotos.forget(key: path.key, db) }
        #expect(try await photos.media(path.key, edge: nil) == nil)
        _ = try await here.write { db in
            try await PhotoIntake.record(caller: "u1", displayName: nil, path: path, stored: Self.objects("b", thumbnails: []), db)
        }
        #expect(try await photos.media(path.key, edge: nil)?.photo.location == "file:///s/b")
        // Many keys without a photo do not push out the photos being read.
        for i in 0..<(StoredPhotos.Recent.capacity + 1) { photos.recent.keep(nil, key: "k\(i)", edge: nil, writes: here.writesEnded, now: clock.now()) }
        #expect(photos.remembered(path.key, edge: nil)?.photo.location == "file:///s/b")
    }
}

/// A clock that moves only when told to.
final class ManualTime: Sendable {
    private let start = ContinuousClock.now
    private let elapsed = Mutex(Duration.zero)

    func advance(by duration: Duration) { elapsed.withLock { $0 += duration } }

    var now: @Sendable () -> ContinuousClock.Instant { { [self] in start + elapsed.withLock { $0 } } }
}
