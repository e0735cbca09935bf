import Foundation
import PhotoServices
import Testing
import TestSupport

/// Profile pictures and albums on a real SQLite file and the local store.
@Suite struct ProfileServiceTests {
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<100 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test func replacingTheProfilePhotoSwitchesAfterTheUploadThenDeletesTheOldOne() async throws {
        let h = try await Harness()
        let profiles = h.services.profiles
        let first = try await profiles.setProfilePhoto(caller: "u1", photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        #expect(try await h.services.users.user("u1")?.profilePhotoKey == nil, "the profile points at nothing until the upload is done")
        #expect(try await h.services.jobs.wait(first).state == .done)
        let user = try #require(try await h.services.users.user("u1"))
        let firstKey = try #require(user.profilePhotoKey)
        #expect(firstKey.hasPrefix("profile_images/u1/"))
        let stored = try #require(h.stored(firstKey))
        let size = try decodedSize(stored)
        #expect(size.width == 1024 && size.height == 640 && stored.count < 500 * 1024, "the profile preset")

        let second = try await profiles.setProfilePhoto(caller: "u1", photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        #expect(try await h.services.users.user("u1")?.profilePhotoKey == firstKey, "still the old picture while the new one uploads")
        #expect(try await h.services.jobs.wait(second).state == .done)
        let secondKey = try #require(try await h.services.users.user("u1")?.profilePhotoKey)
        #expect(secondKey != firstKey && h.stored(secondKey) != nil)
        #expect(await eventually { h.stored(firstKey) == nil }, "the replaced picture is deleted afterwards")

        try await profiles.deleteProfilePhoto(caller: "u1")
        #expect(try await h.services.users.user("u1")?.profilePhotoKey == nil)
        #expect(h.stored(secondKey) == nil)
        #expect(try await h.services.photos.photos([firstKey, secondKey]).isEmpty, "nothing recorded")
    }

    @Test func albumPhotosAreAddedListedAndDeletedByTheirOwnerOnly() async throws {
        let h = try await Harness()
        let profiles = h.services.profiles
        let a = try await profiles.addAlbumPhoto(caller: "u2", album: "holiday", photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        let b = try await profiles.addAlbumPhoto(caller: "u2", album: "holiday", photo: .file(Fixture.path("edge/photo-rgb8.png")))
        #expect(a.photo.key == "user_photos/u2/holiday/\(a.photo.id).jpg")
        for job in [a.job, b.job] { #expect(try await h.services.jobs.wait(job).state == .done) }
        let listed = try await profiles.albumPhotos(caller: "u2", album: "holiday")
        #expect(listed.map(\.id).sorted() == [a.photo.id, b.photo.id].sorted())
        #expect(listed.allSatisfy { $0.state == .done })
        #expect(try await h.services.photos.photos(listed.map(\.key)).count == 2, "each recorded as a stored photo")
        // The album preset keeps a 1920 px photo whole (long edge ≤ 2048, under 5 MiB).
        let stored = try #require(h.stored(a.photo.key))
        #expect(try decodedSize(stored).width == 1920)
        #expect(try await profiles.albumPhotos(caller: "u3", album: "holiday").isEmpty)

        await #expect(throws: ServiceError.notAllowed("u3 may not delete \(a.photo.key)")) {
            try await profiles.deleteAlbumPhoto(caller: "u3", photoId: a.photo.id)
        }
        try await profiles.deleteAlbumPhoto(caller: "u2", photoId: a.photo.id)
        #expect(try await profiles.albumPhotos(caller: "u2", album: "holiday").map(\.id) == [b.photo.id])
        #expect(h.stored(a.photo.key) == nil)
    }

    @Test func albumNamesAndIdsCannotLeaveTheUsersFolder() async throws {
        let h = try await Harness()
        for album in ["../u3", "..", "a/b", "", "x\u{1}"] {
            await #expect(throws: ServiceError.self, "\(album.debugDescription)") {
                try await h.services.profiles.addAlbumPhoto(caller: "u1", album: album, photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
            }
        }
        await #expect(throws: ServiceError.unknownUsers(["u9"])) {
            try await h.services.profiles.setProfilePhoto(caller: "u9", photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        }
        #expect(try await h.count("photoJob") == 0)
    }

    /// The storage rules themselves, as a table: who may write where, and which keys are paths at all.
    @Test(arguments: [
        ("u1", "profile_images/u1/a.jpg", true), ("u1", "profile_images/u2/a.jpg", false),
        ("u1", "user_photos/u1/trip/a.jpg", true), ("u2", "user_photos/u1/trip/a.jpg", false),
        ("u1", "group_photos/g1/photo.jpg", true), ("u2", "group_photos/g1/photo.jpg", false),
        ("u1", "group_photos/g1/other.jpg", false), ("u1", "profile_images/u1/../u2/a.jpg", false),
        ("u1", "user_photos/u1/../a.jpg", false), ("u1", "elsewhere/u1/a.jpg", false), ("u1", "profile_images/u1/", false),
    ])
    func storageRules(caller: String, key: String, allowed: Bool) {
        let verdict = Result { () throws(ServiceError) in
            let path = try StoragePath(key: key)
            try StorageRules.authorize(caller: caller, writing: path) { group in group == "g1" && caller == "u1" }
        }
        #expect(((try? verdict.get()) != nil) == allowed, "\(caller) → \(key)")
    }

    @Test func uploadsMustBeJPEGsUnderThePathsLimit() async throws {
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixture.path("photos/storm-1920x1280.jpg"))))
        try StorageRules.checkUpload(jpeg, to: .profileImage(userId: "u1", file: "a.jpg"))
        let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixture.path("edge/photo-rgb8.png"))))
        #expect(throws: ServiceError.unsupportedPhoto("uploads must be JPEG images")) { try StorageRules.checkUpload(png, to: .profileImage(userId: "u1", file: "a.jpg")) }
        let big = jpeg + [UInt8](repeating: 0, count: 5 * 1024 * 1024 - jpeg.count)
        #expect(big.count == 5 * 1024 * 1024)
        await #expect(throws: ServiceError.photoTooLarge(bytes: big.count, limit: 5 * 1024 * 1024)) {
            try StorageRules.checkUpload(big, to: .groupPhoto(groupId: "g"))
        }
        try StorageRules.checkUpload(big, to: .userPhoto(userId: "u1", album: "a", file: "b.jpg"))
    }
}
