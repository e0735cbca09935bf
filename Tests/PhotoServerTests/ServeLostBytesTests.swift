import Foundation
import Testing
import TestSupport

/// The offset a server reports is never more than the bytes it still has: a data file cut short or removed under
/// the running server is reported as what it holds, and the client's resume from there stores the photo. (Pieces
/// gone from a bucket end the upload with 410: `ServeSharedUploadsTests`.) On the server's router in the test's process.
@Suite struct ServeLostBytesTests {
    @Test func anUploadWhoseFileWasCutShortResumesFromWhatIsLeft() async throws {
        try await SeededRouter.run { server in
            let token = TestTokens.hs256(sub: "u1")
            let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let key = "profile_images/u1/lost.jpg"
            let half = photo.count / 2
            let whole = try await ServeRulesTests.create(server, key: "profile_images/u1/whole.jpg", length: photo.count, token: token)
            #expect(try await ServeRulesTests.patch(server, try #require(whole.header("Location")), offset: 0, body: photo, token: token).status == 204)
            let expected = try #require(server.stored("profile_images/u1/whole.jpg"))
            for (damage, left) in [("cut short", half / 2), ("removed", 0)] {
                let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
                let location = try #require(created.header("Location"), "\(created)")
                #expect(try await ServeRulesTests.patch(server, location, offset: 0, body: Array(photo[..<half]), token: token).status == 204)
                let id = try #require(location.split(separator: "/").last.map(String.init))
                let file = server.data.appendingPathComponent("uploads/\(id).bin")
                if left == 0 {
                    try FileManager.default.removeItem(at: file)
                } else {
                    let handle = try FileHandle(forWritingTo: file)
                    try handle.truncate(atOffset: UInt64(left))
                    try handle.close()
                }
                let head = try await ServeRulesTests.head(server, location, token: token)
                #expect(head.status == 200 && head.header("Upload-Offset") == String(left), "\(damage): \(head)")
                let rest = try await ServeRulesTests.patch(server, location, offset: left, body: Array(photo[left...]), token: token)
                #expect(rest.status == 204 && rest.header("Upload-Offset") == String(photo.count), "\(damage): \(rest)")
                let stored = try #require(server.stored(key), "\(damage)")
                // What is stored is what the photo sent whole became: no byte missing, none twice.
                #expect(stored == expected, "\(damage)")
            }
        }
    }
}
