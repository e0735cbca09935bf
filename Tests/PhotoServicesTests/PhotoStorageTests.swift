import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Foundation
@testable import PhotoServices
import PhotoUpload
import Testing
import TestSupport

/// The stored photos' home, both kinds with the same assertions: a folder on disk and a bucket (moto's
/// S3 on 127.0.0.1), read back from outside (the file, a presigned GET).
@Suite(.serialized) struct PhotoStorageTests {
    /// A storage and how a test reads an object back from outside it.
    struct Opened {
        let storage: any PhotoStorage
        let moto: MotoServer?

        func bytes(key: String, location: String) async throws -> [UInt8]? {
            switch storage.read(key: key, location: location) {
            case .file(let path): return FileManager.default.contents(atPath: path).map { [UInt8]($0) }
            case .redirect(let url):
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 24)
                return response.status.code == 200 ? [UInt8](buffer: body) : nil
            case .missing: return nil
            }
        }
    }

    static func open(_ kind: String) async throws -> Opened {
        if kind == "folder" {
            return Opened(storage: try openPhotoStorage(try temporaryFolder().appendingPathComponent("storage").path), moto: nil)
        }
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        return Opened(storage: try openPhotoStorage("s3://photos/prod", environment: moto.environment()), moto: moto)
    }

    @Test(arguments: ["folder", "bucket"]) func putReadListDelete(kind: String) async throws {
        let opened = try await Self.open(kind)
        let storage = opened.storage
        let jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let key = "user_photos/u1/trip/a.jpg"
        let stored = try await storage.put(jpeg, key: key)
        #expect(stored.location == storage.location(of: key))
        #expect(stored.content.size == Int64(jpeg.count) && stored.content.sha256 == StoredPhotos.Content(of: jpeg).sha256)
        #expect(try await opened.bytes(key: key, location: stored.location) == jpeg)
        // A second put replaces the object whole.
        let other = Array(jpeg.prefix(1000))
        let again = try await storage.put(other, key: key)
        #expect(again.location == stored.location)
        #expect(try await opened.bytes(key: key, location: stored.location) == other)
        _ = try await storage.put(other, key: "profile_images/u1/p.jpg")
        #expect(try await storage.list(prefix: "user_photos/u1") == [key])
        #expect(try await storage.list(prefix: "").sorted() == ["profile_images/u1/p.jpg", key])
        try await storage.delete(stored.location)
        #expect(try await opened.bytes(key: key, location: stored.location) == nil)
        #expect(try await storage.list(prefix: "user_photos") == [])
        // Gone already: not an error.
        try await storage.delete(stored.location)
    }

    @Test(arguments: ["folder", "bucket"]) func aLocationElsewhereIsRefused(kind: String) async throws {
        let storage = try await Self.open(kind).storage
        await #expect(throws: ServiceError.self) { try await storage.delete("file:///etc/passwd") }
        await #expect(throws: ServiceError.self) { try await storage.delete("https://elsewhere.example/photos/prod/a.jpg") }
    }

    @Test func aFolderKeepsKeysInside() async throws {
        let root = try temporaryFolder()
        let storage = FolderStorage(root: root.appendingPathComponent("storage"))
        for key in ["../escape.jpg", "/abs.jpg", "a//b.jpg", "a/./b.jpg", "a/.hidden.jpg", ""] {
            await #expect(throws: ServiceError.self, "\(key)") { _ = try await storage.put([1, 2, 3], key: key) }
        }
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("escape.jpg").path))
        // A file being written (a temporary name starting with a dot) is not listed.
        _ = try await storage.put([1], key: "a/b.jpg")
        try Data([1]).write(to: root.appendingPathComponent("storage/a/.b.jpg.123.tmp"))
        #expect(try await storage.list(prefix: "") == ["a/b.jpg"])
    }

    @Test func aBucketNamesItsContentType() async throws {
        let opened = try await Self.open("bucket")
        let stored = try await opened.storage.put(try Fixture.bytes("photos/ladybird-2560x1600.jpg"), key: "group_photos/g/photo.jpg")
        guard case .redirect(let url) = opened.storage.read(key: "group_photos/g/photo.jpg", location: stored.location) else {
            Issue.record("a bucket's object is read by a redirect")
            return
        }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 24)
        #expect(response.headers.first(name: "Content-Type") == "image/jpeg")
    }

    @Test func openRefusesWhatIsNoStorage() {
        #expect(throws: ServiceError.self) { _ = try openPhotoStorage("https://uploads.example.com/files/") }
        #expect(throws: ServiceError.self) { _ = try openPhotoStorage("s3://") }
    }
}
