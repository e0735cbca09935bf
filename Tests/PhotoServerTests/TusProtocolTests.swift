import Foundation
@testable import PhotoServer
import PhotoServices
import Testing

/// The parsing of what tus clients send: no I/O, tables of examples.
@Suite struct TusProtocolTests {
    @Test func uploadMetadata() {
        let key = Data("profile_images/u1/me.jpg".utf8).base64EncodedString()
        #expect(Tus.metadata(nil) == [:])
        #expect(Tus.metadata("") == [:])
        #expect(Tus.metadata("key \(key)") == ["key": "profile_images/u1/me.jpg"])
        #expect(Tus.metadata("key \(key),is_confidential") == ["key": "profile_images/u1/me.jpg", "is_confidential": ""])
        #expect(Tus.metadata("key \(key), filename \(Data("a b.jpg".utf8).base64EncodedString())")?["filename"] == "a b.jpg")
        // Malformed: three parts, not base64, not UTF-8, a key twice.
        #expect(Tus.metadata("key a b") == nil)
        #expect(Tus.metadata("key !!!") == nil)
        #expect(Tus.metadata("key \(Data([0xFF, 0xFE]).base64EncodedString())") == nil)
        #expect(Tus.metadata("key \(key),key \(key)") == nil)
    }

    @Test func offsetsAndLengths() {
        #expect(Tus.number("0") == 0)
        #expect(Tus.number("5242879") == 5_242_879)
        for bad in [nil, "", "-1", "+5", " 5", "5 ", "0x10", "1e3", "99999999999999999999"] as [String?] {
            #expect(Tus.number(bad) == nil, "\(bad ?? "nil")")
        }
    }

    @Test func checksums() async throws {
        #expect(try Tus.Checksum.parse(nil) == nil)
        let sha1 = try #require(try Tus.Checksum.parse("sha1 qZk+NkcGgWq6PiVxeFDCbJzQ2J0="))
        #expect(sha1.algorithm == .sha1 && sha1.digest.count == 20)
        #expect(try Tus.Checksum.parse("SHA256 \(Data(count: 32).base64EncodedString())")?.algorithm == .sha256)
        #expect(throws: Tus.ChecksumError.self) { try Tus.Checksum.parse("md5 AAAA") }
        #expect(throws: Tus.ChecksumError.self) { try Tus.Checksum.parse("sha1") }
        #expect(throws: Tus.ChecksumError.self) { try Tus.Checksum.parse("sha1 not*base64") }
        var hasher = try #require(try Tus.Checksum.parse("sha1 qZk+NkcGgWq6PiVxeFDCbJzQ2J0=")).hasher()
        Array("hello".utf8).withUnsafeBytes { hasher.update($0) }
        // sha1("hello") = aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d
        #expect(hasher.finalize().map { String(format: "%02x", $0) }.joined() == "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
    }

    @Test func uploadIDsNameNoFile() {
        #expect(TusUpload.isValidID(TusUpload.newID()))
        for bad in ["", "../../etc/passwd", String(repeating: "A", count: 32), String(repeating: "a", count: 31), String(repeating: "g", count: 32)] {
            #expect(!TusUpload.isValidID(bad), "\(bad)")
        }
    }

    @Test func theUploadLifecycle() {
        let now = Date()
        let upload = TusUpload(
            id: TusUpload.newID(), owner: "u1", ownerName: nil, path: .profileImage(userId: "u1", file: "me.jpg"), length: 1000, metadata: [:],
            createdAt: now, expiresAt: now.addingTimeInterval(60), state: .receiving)
        var stored = upload
        stored.state = .stored
        var expired = upload
        expired.expiresAt = now.addingTimeInterval(-1)
        typealias L = UploadLifecycle
        // Nobody but the owner sees it, and nobody once it expired.
        #expect(L.query(nil, caller: "u1", held: 0, now: now) == .notFound)
        #expect(L.query(upload, caller: "u2", held: 0, now: now) == .notFound)
        #expect(L.query(expired, caller: "u1", held: 10, now: now) == .notFound)
        #expect(L.append(upload, caller: "u2", held: 0, claimed: 0, now: now) == .notFound)
        // HEAD.
        #expect(L.query(upload, caller: "u1", held: 400, now: now) == .answer(offset: 400))
        #expect(L.query(upload, caller: "u1", held: 1000, now: now) == .finish)
        #expect(L.query(stored, caller: "u1", held: 0, now: now) == .answer(offset: 1000))
        // PATCH.
        #expect(L.append(upload, caller: "u1", held: 400, claimed: 400, now: now) == .receive(from: 400))
        #expect(L.append(upload, caller: "u1", held: 400, claimed: 0, now: now) == .conflict(held: 400))
        #expect(L.append(upload, caller: "u1", held: 400, claimed: 1000, now: now) == .conflict(held: 400))
        #expect(L.append(stored, caller: "u1", held: 0, claimed: 1000, now: now) == .answer(offset: 1000))
        #expect(L.append(stored, caller: "u1", held: 0, claimed: 0, now: now) == .conflict(held: 1000))
        // After a body.
        #expect(L.received(upload, offset: 1000, stopping: false) == .finish)
        #expect(L.received(upload, offset: 1000, stopping: true) == .answer(offset: 1000))
        #expect(L.received(upload, offset: 999, stopping: false) == .answer(offset: 999))
    }
}
