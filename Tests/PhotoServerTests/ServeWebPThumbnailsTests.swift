import Foundation
import PhotoPrep
import PhotoServices
import PhotoUpload
import SQLKit
import Testing
import TestSupport

/// Thumbnails as WebP beside the JPEG, made on arrival from the same pixels when a WebP reaches the JPEG's SSIMULACRA2
/// score in fewer bytes: listed by the API (`webpDownloadURL`), served by `Accept` on the thumbnail's URL with
/// `Vary: Accept`, deleted with the photo; in the folder and in a bucket; none with `--webp-thumbnails off`.
@Suite struct ServeWebPThumbnailsTests {
    static let webpAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"  // Chromium's for an <img>

    /// The album photo's 512 px thumbnail (storm: its WebP reaches the JPEG's score in fewer bytes) as the API lists it.
    static func albumThumbnail(_ server: PhotoServerProcess, token: String) async throws -> (key: String, thumbnail: [String: Any]) {
        try await ServePhotoDetailsTests.upload(server, "user_photos/u1/trip/storm.jpg", "photos/storm-1920x1280.jpg", token: token)
        let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: token).body["photos"] as? [[String: Any]] ?? []
        let photo = try #require(album.first, "\(album)")
        let thumbnail = try #require((photo["thumbnails"] as? [[String: Any]])?.first { $0["edge"] as? Int == 512 }, "\(photo)")
        return (try #require(photo["key"] as? String), thumbnail)
    }

    @Test func aThumbnailIsServedAsWebPToClientsThatAcceptIt() async throws {
        let server = try await onThread { try PhotoServerProcess() }
        defer { server.stop() }
        let u1 = TestTokens.hs256(sub: "u1")
        let (key, thumbnail) = try await Self.albumThumbnail(server, token: u1)
        let (width, height) = (try #require(thumbnail["width"] as? Int), try #require(thumbnail["height"] as? Int))
        let jpegURL = try #require(thumbnail["downloadURL"] as? String), webpURL = try #require(thumbnail["webpDownloadURL"] as? String, "\(thumbnail)")
        let storedWebP = try #require(server.stored("thumbnails/webp/512/\(key).webp")), storedJPEG = try #require(server.stored("thumbnails/512/\(key)"))
        #expect(storedWebP.count < storedJPEG.count, "\(storedWebP.count) ≥ \(storedJPEG.count)")

        // Asked for by its own URL: WebP, of the thumbnail's size.
        let asked = try await ServeReadTests.fetch(webpURL)
        #expect(asked.status == 200 && asked.headers["content-type"] == "image/webp" && asked.bytes == storedWebP)
        let probe = try PhotoPipeline(preset: .photo).probe(asked.bytes)
        #expect(probe.format == .webp && probe.width == width && probe.height == height, "\(probe)")

        // The thumbnail's URL, by Accept: a browser's gets WebP; none, image/*, or image/webp;q=0 get JPEG. Always Vary: Accept.
        for (accept, webp) in [(Self.webpAccept, true), ("image/webp", true), (nil, false), ("image/*", false), ("image/webp;q=0, image/jpeg", false)] {
            let answer = try await ServeReadTests.fetch(jpegURL, headers: accept.map { ["Accept": $0] } ?? [:])
            #expect(answer.status == 200 && answer.headers["vary"]?.contains("Accept") == true, "\(accept ?? "none"): \(answer.headers)")
            #expect(answer.headers["content-type"] == (webp ? "image/webp" : "image/jpeg") && answer.bytes == (webp ? storedWebP : storedJPEG), "\(accept ?? "none")")
            // Its ETag is its own bytes': a cache revalidating one format is not told the other is the same.
            let etag = try #require(answer.headers["etag"])
            let again = try await ServeReadTests.fetch(jpegURL, headers: (accept.map { ["Accept": $0] } ?? [:]).merging(["If-None-Match": etag]) { $1 })
            #expect(again.status == 304)
        }
        // The photo itself is JPEG whatever the client accepts, and does not vary by it.
        let photoURL = try #require(jpegURL.components(separatedBy: "&size=").first)
        let photo = try await ServeReadTests.fetch(photoURL, headers: ["Accept": Self.webpAccept])
        #expect(photo.headers["content-type"] == "image/jpeg" && photo.headers["vary"] == nil && photo.bytes == server.stored(key))
        // A format we do not have: 404.
        #expect(try await ServeReadTests.fetch(photoURL + "&format=webp").status == 404)
        #expect(try await ServeReadTests.fetch(webpURL.replacingOccurrences(of: "format=webp", with: "format=avif")).status == 404)

        // Deleted with its photo.
        let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: u1).body["photos"] as? [[String: Any]] ?? []
        let id = try #require(album.first?["id"] as? String)
        #expect(try await ServeAPITests.call(server, "DELETE", "/v1/albums/trip/photos/\(id)", token: u1).status == 204)
        #expect(server.stored("thumbnails/webp/512/\(key).webp") == nil && server.stored("thumbnails/512/\(key)") == nil)
    }

    /// A thumbnail whose WebP would not reach the JPEG's score has none: the API lists no WebP URL, `format=webp` is 404,
    /// and a client that accepts WebP gets the JPEG.
    @Test func aThumbnailWithoutAWebPIsJPEGForEveryone() async throws {
        // Long-edge avatars: ladybird's 128 and 256 px fits have no WebP (measured; the squares' may).
        let server = try await onThread { try PhotoServerProcess(arguments: ["--square-avatars", "off"]) }
        defer { server.stop() }
        let u1 = TestTokens.hs256(sub: "u1")
        try await ServePhotoDetailsTests.upload(server, "profile_images/u1/me.jpg", "photos/ladybird-2560x1600.jpg", token: u1)
        let photo = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        let thumbnails = try #require(photo["thumbnails"] as? [[String: Any]], "\(photo)")
        let database = try await AppDatabase(path: server.data.appendingPathComponent("app.sqlite").path, role: .server)
        let keys = try await database.rows("SELECT \"edge\", \"webpLocation\" FROM \"storedThumbnail\" ORDER BY \"edge\"")
        #expect(thumbnails.count == 2 && keys.count == 2)
        for (thumbnail, row) in zip(thumbnails, keys) {
            let hasWebP = try row.decode(column: "webpLocation", as: String?.self) != nil
            #expect((thumbnail["webpDownloadURL"] != nil) == hasWebP)
            guard !hasWebP else { continue }
            let url = try #require(thumbnail["downloadURL"] as? String)
            #expect(try await ServeReadTests.fetch(url + "&format=webp").status == 404)
            let answer = try await ServeReadTests.fetch(url, headers: ["Accept": Self.webpAccept])
            #expect(answer.headers["content-type"] == "image/jpeg" && answer.headers["vary"] == "Accept")
        }
        // ladybird's 128 and 256 px JPEGs keep full-resolution chroma for SSIMULACRA2 85: no WebP reaches them.
        #expect(thumbnails.allSatisfy { $0["webpDownloadURL"] == nil }, "\(thumbnails)")
    }

    @Test func noWebPWhenTurnedOff() async throws {
        let server = try await onThread { try PhotoServerProcess(arguments: ["--webp-thumbnails", "off"]) }
        defer { server.stop() }
        let (_, thumbnail) = try await Self.albumThumbnail(server, token: TestTokens.hs256(sub: "u1"))
        #expect(thumbnail["webpDownloadURL"] == nil)
        #expect(!server.storedKeys.contains { $0.hasPrefix("thumbnails/webp/") }, "\(server.storedKeys)")
        let answer = try await ServeReadTests.fetch(try #require(thumbnail["downloadURL"] as? String), headers: ["Accept": Self.webpAccept])
        #expect(answer.headers["content-type"] == "image/jpeg")
    }

    /// In a bucket: stored as image/webp, served through the presigned redirect as WebP.
    @Test func inABucket() async throws {
        let bucket = try await BucketServer.start(database: "sqlite")
        defer { bucket.server.stop() }
        let (key, thumbnail) = try await Self.albumThumbnail(bucket.server, token: TestTokens.hs256(sub: "u1"))
        #expect(try await bucket.objects.list(prefix: "thumbnails/webp/").contains("thumbnails/webp/512/\(key).webp"))
        let answer = try await ServeReadTests.fetch(try #require(thumbnail["downloadURL"] as? String), headers: ["Accept": Self.webpAccept])
        #expect(answer.status == 200 && answer.headers["content-type"] == "image/webp", "\(answer.headers)")
        #expect(try PhotoPipeline(preset: .photo).probe(answer.bytes).format == .webp)
    }
}
