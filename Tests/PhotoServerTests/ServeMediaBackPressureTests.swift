import Foundation
import Testing
import TestSupport

/// The unread-pipelining attack on the download path (`MediaOnEventLoop`): 48 connections pipeline GETs of a
/// thumbnail's download URL as fast as the server reads them and never read an answer. The server stops reading
/// a connection whose answers are not written, so its memory stays within 100 MB of idle, it keeps answering
/// others, and connections whose answers are not read are closed after the idle timeout.
@Suite struct ServeMediaBackPressureTests {
    @Test func pipelinedDownloadsNobodyReadsDoNotFillTheServer() async throws {
        let seeded = try await SeededServer.start(arguments: ["--idle-timeout", "3"])
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        // Each call on a connection of its own: a kept one may be closed by the 3 s idle timeout as it is reused.
        let once = ["Connection": "close"]
        let created = try await ServeRulesTests.create(server, key: "group_photos/\(seeded.groupId)/photo.jpg", length: jpeg.count, token: u1, extra: once)
        #expect(try await ServeRulesTests.patch(try #require(created.header("Location")), offset: 0, body: jpeg, token: u1, extra: once).status == 204)
        let photo = try await ServeAPITests.call(server, "GET", "/v1/groups/\(seeded.groupId)/photo", token: u1, headers: once)
        let thumbnails = try #require(photo.body["thumbnails"] as? [[String: Any]], "\(photo.body)")
        let url = try #require(thumbnails.last?["downloadURL"] as? String)
        let thumbnail = try await HTTPExchange.send("GET", url, headers: once)  // now in memory: answered on the event loop
        #expect(thumbnail.status == 200)

        let attack = try await runSupportScript(
            "unread_pipelining.py", [String(server.port), String(server.process.processIdentifier), String(url.dropFirst(server.base.count)), "48", "5", "40"])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(attack.stdout.utf8)) as? [String: Int], "\(attack)")
        let grown = (result["peakRSSKiB"] ?? 0) - (result["idleRSSKiB"] ?? 0)
        #expect((result["requests"] ?? 0) > 1000, "the attack sent requests: \(result)")
        #expect(grown < 100 * 1024, "the server grew by \(grown / 1024) MB under the attack: \(result)")
        #expect(result["closedByServer"] == 48, "connections whose answers are not read are closed once their answers stall for the idle timeout: \(result)")
        #expect(try await HTTPExchange.send("GET", server.base + "/health/live", headers: once).status == 200)
    }
}
