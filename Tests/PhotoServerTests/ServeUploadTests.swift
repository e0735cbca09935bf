import Foundation
import SQLKit
import PhotoPrep
import PhotoServices
import AsyncHTTPClient
@testable import PhotoUpload
import Testing
import TestSupport

/// Real clients — tuspy (the tus project's Python client) and `photoprep upload` — upload real photos to
/// the built `photoprep serve`; the tests check what the server stored and recorded.
@Suite struct ServeUploadTests {
    func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func tuspyUploadsATwentyMegapixelPhotoToEveryPathKind() async throws {
        let seeded = try await SeededServer.start()
        let token = TestTokens.hs256(sub: "u1")
        let group = "group_photos/\(seeded.groupId)/photo.jpg", profile = "profile_images/u1/me.jpg", album = "user_photos/u1/trip/summit.jpg"
        let presets: [(String, PrepareOptions.Preset)] = [(group, .group), (profile, .profile), (album, .photo)]
        for (key, preset) in presets {
            let result = try await runSupportScript("tuspy_upload.py", [seeded.server.endpoint, key, try await onThread { BigPhotos.twentyMP }, "--token", token, "--checksum"])
            #expect(json(result.stdout)["ok"] as? Bool == true, "\(key): \(result.stdout) \(result.stderr)")
            // Stored upright (the original is stored sideways with orientation 6), within the preset, no EXIF/GPS.
            let probe = try checkNormalised(seeded.server.stored(key), preset: preset, portrait: true)
            #expect(max(probe.width, probe.height) == PrepareOptions(preset: preset).maxEdge)
        }
        let database = try await seeded.database()
        let url = { (key: String) in seeded.server.data.appendingPathComponent("storage").appendingPathComponent(key).absoluteString }
        let chat = try await database.one(ChatGroup.self, from: "chatGroup", id: seeded.groupId)
        #expect(chat?.photoState == .done)
        let user = try await database.one(User.self, from: "user", id: "u1")
        #expect(user?.profilePhotoKey == profile)
        let photos = try await database.all(AlbumPhoto.self, from: "albumPhoto")
        #expect(photos.map(\.key) == [album] && photos.first?.state == .done && photos.first?.userId == "u1")
        // Where each is stored: its stored photo's record, the one place that says it.
        let stored = StoredPhotos(database: database)
        for key in [group, profile, album] {
            let location = try await stored.location(of: key)
            #expect(location.flatMap { URL(string: $0)?.path } == URL(string: url(key))?.path, "\(key): \(location ?? "nowhere")")
        }
        // Nothing is left behind but the finished uploads' small records.
        let left = try FileManager.default.contentsOfDirectory(atPath: seeded.server.data.appendingPathComponent("uploads").path)
        #expect(left.allSatisfy { $0.hasSuffix(".info") } && left.count == 3)
    }

    @Test func photoprepUploadWithATokenIsNormalisedOnArrival() async throws {
        let seeded = try await SeededServer.start()
        let state = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: state) }
        let files = [
            Fixture.path("orientation/landscape_6.jpg"), Fixture.path("photos/storm-1920x1280.jpg"), Fixture.path("edge/photo-rgb8.png"),
        ]
        let arguments = ["upload"] + files + [
            "--to", seeded.server.endpoint, "--key-prefix", "user_photos/u2/trip/", "--token", TestTokens.hs256(sub: "u2"), "--state", state.path,
        ]
        let result = try await photoprep(arguments)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        // Stored sideways (400 × 640 pixels, orientation 6) with GPS → upright (640 × 400), no GPS.
        let sideways = try checkNormalised(seeded.server.stored("user_photos/u2/trip/landscape_6.jpg"), preset: .photo, portrait: false)
        #expect(sideways.width == 640 && sideways.height == 400)
        // What the pipeline makes of each original is exactly what is stored (a compliant photo passes through).
        for file in files {
            let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let expected = try PhotoPipeline(preset: .photo).prepare(original)
            let stored = seeded.server.stored("user_photos/u2/trip/" + (file as NSString).lastPathComponent)
            #expect(stored == expected.jpeg, "\(file)")
            if expected.report.action == .passedThrough { #expect(stored == original) }
            _ = try checkNormalised(stored, preset: .photo)
        }
        let photos = try await seeded.database().all(AlbumPhoto.self, from: "albumPhoto", where: "userId", "u2")
        #expect(Set(photos.map(\.key)) == Set(files.map { "user_photos/u2/trip/" + ($0 as NSString).lastPathComponent }))
    }

    /// What phones send, as they send it: HEIC (an iPhone-style grid, one whose `irot` contradicts its EXIF),
    /// AVIF and WebP, each stored as exactly the upload-ready JPEG the pipeline makes of it — for an album and
    /// as a profile picture and as a group's photo.
    @Test func heicAVIFAndWebPAreNormalisedOnArrival() async throws {
        let seeded = try await SeededServer.start()
        let state = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: state) }
        let files = ["formats/grid.heic", "formats/irot-exif-contradicts.heic", "formats/photo-10bit.avif", "formats/lossy.webp", "formats/alpha.webp"]
            .map { Fixture.path($0) }
        let token = TestTokens.hs256(sub: "u2")
        let arguments = ["upload"] + files + ["--to", seeded.server.endpoint, "--key-prefix", "user_photos/u2/phone/", "--token", token, "--state", state.path]
        let result = try await photoprep(arguments)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for file in files {
            let expected = try PhotoPipeline(preset: .photo).prepare(contentsOf: file)
            let stored = seeded.server.stored("user_photos/u2/phone/" + (file as NSString).lastPathComponent)
            #expect(stored == expected.jpeg, "\(file)")
            _ = try checkNormalised(stored, preset: .photo, portrait: false)
        }
        let profile = try await runSupportScript(
            "tuspy_upload.py", [seeded.server.endpoint, "profile_images/u2/me.jpg", Fixture.path("formats/photo.heic"), "--token", token])
        #expect(json(profile.stdout)["ok"] as? Bool == true, "\(profile.stdout) \(profile.stderr)")
        let picture = try checkNormalised(seeded.server.stored("profile_images/u2/me.jpg"), preset: .profile, portrait: false)
        #expect(picture.width == 1024 && picture.height == 640)
        // A group's admin sets its photo from an iPhone grid.
        let groupKey = "group_photos/\(seeded.groupId)/photo.jpg"
        let group = try await runSupportScript(
            "tuspy_upload.py", [seeded.server.endpoint, groupKey, Fixture.path("formats/grid.heic"), "--token", TestTokens.hs256(sub: "u1")])
        #expect(json(group.stdout)["ok"] as? Bool == true, "\(group.stdout) \(group.stderr)")
        #expect(seeded.server.stored(groupKey) == (try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("formats/grid.heic")).jpeg))
        let photos = try await seeded.database().all(AlbumPhoto.self, from: "albumPhoto", where: "userId", "u2")
        #expect(photos.count == files.count && photos.allSatisfy { $0.state == .done })
    }

    /// A profile picture under a new name replaces the old one in storage too: after `a.jpg` then `b.jpg`, one
    /// object in the user's folder (the photo jobs did so; arrivals at the server left the old one behind).
    @Test(arguments: ["local", "s3"])
    func aNewProfilePictureDeletesTheOldOne(storage: String) async throws {
        let moto = storage == "s3" ? try MotoServer() : nil
        if let moto { try await moto.createBucket("photos") }
        let seeded = try await SeededServer.start(
            arguments: moto == nil ? [] : ["--to", "s3://photos/prod"], environment: moto?.environment() ?? [:])
        let token = TestTokens.hs256(sub: "u3")
        for (name, file) in [("a.jpg", "photos/storm-1920x1280.jpg"), ("b.jpg", "formats/grid.heic")] {
            let result = try await runSupportScript("tuspy_upload.py", [seeded.server.endpoint, "profile_images/u3/\(name)", Fixture.path(file), "--token", token])
            #expect(json(result.stdout)["ok"] as? Bool == true, "\(result.stdout) \(seeded.server.log)")
        }
        let user = try #require(try await seeded.database().one(User.self, from: "user", id: "u3"))
        #expect(user.profilePhotoKey == "profile_images/u3/b.jpg")
        let location = try await StoredPhotos(database: seeded.database()).location(of: "profile_images/u3/b.jpg")
        #expect(location?.hasSuffix("profile_images/u3/b.jpg") == true)
        let left: [String]
        if let moto {
            let objects = S3Objects(store: try S3Store(url: "s3://photos", environment: moto.environment()))
            left = try await objects.list(prefix: "prod/profile_images/u3/")
            #expect(left == ["prod/profile_images/u3/b.jpg"])
            Self.expectOnlyThumbnailsOfB(try await objects.list(prefix: "prod/thumbnails/"), prefix: "prod/")
        } else {
            left = try FileManager.default.contentsOfDirectory(atPath: seeded.server.data.appendingPathComponent("storage/profile_images/u3").path)
            #expect(left == ["b.jpg"])
            Self.expectOnlyThumbnailsOfB(seeded.server.storedKeys.filter { $0.hasPrefix("thumbnails/") }, prefix: "")
        }
        #expect(try await seeded.database().count("staleObject") == 0, "nothing left to delete later")
    }

    /// The thumbnails left are b.jpg's JPEGs (and WebPs, where made): none of a.jpg's.
    static func expectOnlyThumbnailsOfB(_ keys: [String], prefix: String) {
        #expect(keys.filter { !$0.contains("/webp/") }.sorted() == [128, 256].map { "\(prefix)thumbnails/\($0)/profile_images/u3/b.jpg" })
        #expect(keys.allSatisfy { $0.hasSuffix("profile_images/u3/b.jpg") || $0.hasSuffix("profile_images/u3/b.jpg.webp") }, "\(keys)")
    }

    /// The same key again replaces the stored photo and its record, it does not add a second one.
    @Test func uploadingTheSameKeyAgainReplacesThePhoto() async throws {
        let seeded = try await SeededServer.start()
        let token = TestTokens.hs256(sub: "u3")
        for file in ["photos/storm-1920x1280.jpg", "photos/ladybird-2560x1600.jpg"] {
            let result = try await runSupportScript("tuspy_upload.py", [seeded.server.endpoint, "user_photos/u3/a/x.jpg", Fixture.path(file), "--token", token])
            #expect(json(result.stdout)["ok"] as? Bool == true, "\(result.stdout)")
        }
        let expected = try PhotoPipeline(preset: .photo).prepare(Fixture.bytes("photos/ladybird-2560x1600.jpg")).jpeg
        #expect(seeded.server.stored("user_photos/u3/a/x.jpg") == expected)
        let photos = try await seeded.database().all(AlbumPhoto.self, from: "albumPhoto")
        #expect(photos.count == 1)
    }

    /// `--to s3://bucket/prefix`: normalised photos go to S3 (moto on 127.0.0.1), the records point there,
    /// nothing is written to the local store.
    @Test func photosAreStoredInS3WithTo() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let seeded = try await SeededServer.start(arguments: ["--to", "s3://photos/prod"], environment: moto.environment())
        let token = TestTokens.hs256(sub: "u1")
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let result = try await runSupportScript("tuspy_upload.py", [seeded.server.endpoint, key, Fixture.path("photos/ladybird-2560x1600.jpg"), "--token", token])
        #expect(json(result.stdout)["ok"] as? Bool == true, "\(result.stdout) \(seeded.server.log)")
        let url = "\(moto.endpoint)/photos/prod/\(key)"
        let stored = try await S3Store(url: "s3://photos", environment: moto.environment()).download("prod/\(key)", client: .shared)
        #expect(stored == (try PhotoPipeline(preset: .group).prepare(Fixture.bytes("photos/ladybird-2560x1600.jpg")).jpeg))
        _ = try checkNormalised(stored, preset: .group)
        #expect(try await StoredPhotos(database: seeded.database()).location(of: key) == url)
        #expect(seeded.server.storedKeys.isEmpty)
    }

    /// Storage down when the last byte arrives: 503 (after the server's storing budget), every byte kept;
    /// once storage is back, the client's HEAD finishes the photo.
    @Test func storageDownAnswers503AndKeepsTheBytes() async throws {
        let port = ServerProcess.freePort()
        let environment = [
            "AWS_ENDPOINT_URL": "http://127.0.0.1:\(port)", "AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret",
            "AWS_REGION": "us-east-1",
        ]
        let seeded = try await SeededServer.start(arguments: ["--to", "s3://photos/p"], environment: environment)
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/me.jpg"
        let first = try await HTTPExchange.send(
            "POST", seeded.server.endpoint,
            headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)", "Upload-Length": String(jpeg.count),
                      "Upload-Metadata": ServeRulesTests.metadata(key), "Content-Type": "application/offset+octet-stream"],
            body: jpeg)
        #expect(first.status == 503 && first.header("Retry-After") != nil, "\(first.status) \(first.body)")
        let location = try #require(first.header("Location"), "the upload is kept, and the client told where")
        #expect(seeded.server.receivedBytes(location) == jpeg.count)

        let moto = try MotoServer(port: port)
        try await moto.createBucket("photos")
        // The client asks again as told (Retry-After) while storage still refuses (a just-started moto can be
        // slow to take its first object on a busy machine), or while the server's sweeper is finishing it (423).
        var head = try await ServeRulesTests.head(location, token: u1)
        for _ in 0..<10 where head.status == 503 || head.status == 423 {
            try await Task.sleep(for: .seconds(Double(head.header("Retry-After") ?? "1") ?? 1))
            head = try await ServeRulesTests.head(location, token: u1)
        }
        #expect(head.status == 200 && head.header("Upload-Offset") == String(jpeg.count), "\(head.status) \(head.body)")
        let stored = try await S3Store(url: "s3://photos", environment: moto.environment()).download("p/\(key)", client: .shared)
        #expect(stored == (try PhotoPipeline(preset: .profile).prepare(jpeg).jpeg))
    }
}
