import Foundation
import PhotoServices
import PhotoUpload
import Testing
import TestSupport

/// What the services keep of a user's photo: never its metadata, wherever it hides, and nothing
/// readable by other users of the machine.
@Suite struct PrivacyTests {
    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
    }

    /// `cat photo.jpg another-with-gps.jpg` as a profile picture: the stored object has no EXIF, no GPS.
    @Test func aProfilePhotoWithAnAppendedGPSImageIsStoredWithout() async throws {
        let h = try await Harness()
        let gps = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixture.path("orientation/landscape_1.jpg"))))
        #expect(Self.contains(gps, "Exif"))
        let job = try await h.services.profiles.setProfilePhoto(caller: "u1", photo: .bytes(gps + gps))
        #expect(try await h.services.jobs.wait(job).state == .done)
        let key = try #require(try await h.services.users.user("u1")?.profilePhotoKey)
        let stored = try #require(h.stored(key))
        #expect(!Self.contains(stored, "Exif"))
        #expect(stored.count < gps.count, "one image, no trailer")
        #expect(try decodedSize(stored) == (640, 400))
    }

    /// A photo whose upload is pending (destination unreachable): the staged original, with its GPS, is
    /// gone; the prepared bytes kept for the retry carry no metadata; files and folders are owner-only.
    @Test func aPendingPhotoKeepsNoOriginalAndNothingWorldReadable() async throws {
        var upload = UploadConfiguration()
        upload.firstContactDuration = .zero
        upload.maxRetryDuration = .zero
        let h = try await Harness(destination: "http://127.0.0.1:\(ServerProcess.freePort())/files/", upload: upload)
        let job = try await h.services.profiles.setProfilePhoto(caller: "u1", photo: .file(Fixture.path("orientation/landscape_6.jpg")))
        let record = try await h.services.jobs.wait(job)
        #expect(record.state == .pending, "\(record.error ?? "")")
        #expect(!FileManager.default.fileExists(atPath: record.originalPath))
        let staging = (record.originalPath as NSString).deletingLastPathComponent
        let staged = try FileManager.default.contentsOfDirectory(atPath: staging)
        #expect(staged.allSatisfy { !$0.hasSuffix(".original") }, "\(staged)")
        let prepared = try #require(record.preparedPath)
        #expect(!Self.contains([UInt8](try Data(contentsOf: URL(fileURLWithPath: prepared))), "Exif"))
        #expect(try Self.mode(prepared) == 0o600)
        #expect(try Self.mode(staging) == 0o700)
        #expect(try Self.mode(h.folder.appendingPathComponent("state").path) == 0o700)
        if h.services.database.kind == .sqlite { #expect(try Self.mode(h.databasePath) == 0o600) }
    }
}
