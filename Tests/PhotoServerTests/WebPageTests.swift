import Foundation
import PhotoPrep
import PhotoServer
import PhotoServices
import Testing
import TestSupport

/// The page at `/`, used in a real browser (Debian's Chromium through Playwright, `web_page.py`) on a
/// throttled connection, then checked against what the server holds: a group created with two
/// participants and its photo, progress seen moving, a cancelled upload gone, an upload resumed after a
/// reload sending only the rest, the server's 415 shown in words, markup in a name shown as text, CORS
/// for an allowed origin only.
@Suite struct WebPageTests {
    @Test func thePageInABrowser() async throws {
        let (allowed, refused) = (ServerProcess.freePort(), ServerProcess.freePort())
        let seeded = try await SeededServer.start(arguments: ["--cors-origin", "http://127.0.0.1:\(allowed)"])
        let server = seeded.server
        let screenshot = ProcessInfo.processInfo.environment["PHOTOPREP_UPDATE_SCREENSHOT"] == nil
            ? FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString).png").path
            : projectFolder.appendingPathComponent("docs/web-page.png").path
        let photo = Fixture.path("photos/storm-1920x1280.jpg")
        let run = try await runSupportScript("web_page.py", [
            "--base", server.base, "--token", TestTokens.hs256(sub: "u1"), "--server-log", server.logFile.path, "--photo", photo,
            "--small", Fixture.path("edge/grey.jpg"), "--large", BigPhotos.twentyMPLarge, "--allowed-port", String(allowed), "--refused-port", String(refused),
            "--screenshot", screenshot,
        ])
        try #require(run.status == 0, "\(run.stderr.suffix(4000))")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let size = try Fixture.bytes("photos/storm-1920x1280.jpg").count

        // Signed in with the token, kept for the tab only.
        #expect(page["who"] as? String == "Signed in as Ana (u1)")
        #expect(page["tokenInSessionStorage"] as? Bool == true && page["tokenInLocalStorage"] as? Bool == false)
        let csp = try #require(page["csp"] as? String)
        #expect(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"))

        // The group, as the server has it: two participants picked by name, its photo stored and shown.
        let groupId = try #require(page["groupId"] as? String)
        let state = try await ServeClientTests.serverGroup(seeded, groupId)
        #expect(state.group?.name == "Beach day" && state.members.map(\.userId) == ["u1", "u2", "u3"])
        #expect(state.messages.map(\.text) == ["Ana created the group"] && state.group?.photoState == .done)
        let stored = try checkNormalised(server.stored("group_photos/\(groupId)/photo.jpg"), preset: .group, portrait: false)
        #expect(page["groupPageImage"] as? [Int] == [stored.width, stored.height], "the stored photo, rendered")
        // While the photo was held back, its placeholder stood in for it, drawn by the page as our decoder draws the
        // ThumbHash recorded with the photo (`ThumbHashTests` holds that to the photo's colours): its colours, its shape.
        let placeholder = try #require(page["placeholderWhileLoading"] as? [String: Any])
        let mean = try #require(placeholder["mean"] as? [Double]), drawn = try #require(placeholder["size"] as? [Int])
        let box = try #require(placeholder["box"] as? [Double])
        let record = try await seeded.database().one(StoredPhoto.self, from: "storedPhoto", id: "group_photos/\(groupId)/photo.jpg", key: "key")
        let hash = try #require(record?.placeholder.flatMap { Data(base64Encoded: $0) })
        let ours = try #require(ThumbHash.decode([UInt8](hash)))
        let expected = [ours.meanRGB.red, ours.meanRGB.green, ours.meanRGB.blue]
        #expect(placeholder["dataURL"] as? Bool == true && zip(mean, expected).allSatisfy { abs($0 - $1) < 1.5 }, "page \(mean), ours \(expected)")
        #expect(drawn.max() == 32 && abs(Double(drawn[0]) / Double(drawn[1]) - Double(stored.width) / Double(stored.height)) < 0.2, "\(drawn)")
        #expect(box[0] > 100 && abs(box[0] / box[1] - Double(drawn[0]) / Double(drawn[1])) < 0.05, "the box has the photo's shape before it came: \(box)")
        #expect(page["placeholderAfterLoad"] as? [String] == ["replaced", ""], "gone once the photo loaded")
        // Clicked by its admin a tenth of the way in from the left, half-way down: the avatar's squares are centred there.
        let focused = try await seeded.database().one(StoredPhoto.self, from: "storedPhoto", id: "group_photos/\(groupId)/photo.jpg", key: "key")
        let focus = try #require(focused?.focus.flatMap { FocalPoint(parsing: $0) }, "\(String(describing: focused?.focus))")
        #expect(abs(focus.x + 0.8) < 0.03 && abs(focus.y) < 0.03, "\(focus)")
        let thumbnail = try PhotoPipeline(preset: .group).probe(try #require(server.stored("thumbnails/128/group_photos/\(groupId)/photo.jpg")))
        #expect(page["groupListImage"] as? [Int] == [thumbnail.width, thumbnail.height] && thumbnail.width == 128, "its 128 px thumbnail in the list")
        let progress = try #require(page["groupProgress"] as? [Int])
        #expect(Set(progress).count >= 3 && progress.last == size && progress == progress.sorted(), "progress moves forward: \(Set(progress).sorted())")

        // Cancelled mid-upload: gone from the server, nothing stored.
        let cancelled = try #require(page["cancelledUpload"] as? String)
        #expect(page["cancelledHead"] as? Int == 404 && page["cancelledForgotten"] as? Bool == true)
        let uploads = try FileManager.default.contentsOfDirectory(atPath: server.data.appendingPathComponent("uploads").path)
        #expect(!uploads.contains { $0.hasPrefix(URL(string: cancelled)!.lastPathComponent) }, "\(uploads)")

        // Reloaded mid-upload: the same upload resumed, and the server received the rest, not the whole photo
        // again — at most the chunk the reload cut short a second time.
        let before = try #require(page["reloadBefore"] as? [String: Int])
        let after = try #require(page["reloadAfter"] as? [String: Int])
        let total = try #require(page["reloadTotal"] as? [String: Int])
        #expect(before.count == 1 && Set(after.keys) == Set(before.keys) && Set(total.keys) == Set(before.keys), "one upload, resumed: \(before) \(after)")
        #expect((before.values.first ?? 0) >= 256 * 1024 && (after.values.first ?? size) < size, "\(before) \(after)")
        #expect((size...(size + 256 * 1024)).contains(total.values.first ?? 0), "\(total)")
        let album = try await seeded.database().all(AlbumPhoto.self, from: "albumPhoto", where: "userId", "u1", orderBy: "createdAt")
        #expect(album.map(\.album).sorted() == ["photos", "web"] && album.allSatisfy { $0.state == .done }, "the reloaded one and the other origin's: \(album)")
        #expect(page["albumImage"] as? [Int] == [512, 341])

        // Refusals in the server's words; markup is text.
        let refusal = try #require(page["textFileStatus"] as? String)
        #expect(refusal.contains("415") && refusal.contains("found text, not an image"), "\(refusal)")
        let tooLarge = try #require(page["tooLargeStatus"] as? String)
        #expect(tooLarge.contains("must be smaller than 5242880 bytes") && page["tooLargeRequests"] as? Int == 0, "checked before sending: \(tooLarge)")
        // A 429 with Retry-After: 3 on the creation: asked again no sooner (the page's own backoff is 1 s).
        let gap = try #require(page["retryAfterGap"] as? Double, "no second creation")
        #expect(gap >= 2.9 && gap < 15, "asked again after \(gap) s")
        // Offline for two seconds mid-upload: retried until it finished, the photo's bytes received once.
        let offline = try #require(page["offlineReceived"] as? [String: Int])
        #expect(offline.count == 1 && offline.values.first == size, "\(offline)")
        let user = try #require(try await seeded.database().one(User.self, from: "user", id: "u1"))
        let picture = try checkNormalised(server.stored(try #require(user.profilePhotoKey)), preset: .profile, portrait: false)

        let key = try #require(user.profilePhotoKey)
        let avatar = try PhotoPipeline(preset: .profile).probe(try #require(server.stored("thumbnails/128/\(key)")))
        #expect(page["profileImage"] as? [Int] == [avatar.width, avatar.height] && max(picture.width, picture.height) == 1024)
        #expect(server.storedKeys.filter { $0.hasPrefix("profile_images/u1/") } == [key], "the cancelled and refused uploads stored nothing: \(server.storedKeys)")

        let hostile = "<img src=x onerror=\"window.pwned=1\">"
        #expect((page["hostileShown"] as? [String])?.contains(hostile) == true && page["hostileRan"] as? Bool == false)
        #expect(try await seeded.database().count("chatGroup", where: "name", hostile) == 1)

        // Usable: every control named, nothing wider than a phone; no script error, nothing the CSP refused.
        #expect((page["unlabelled"] as? [String])?.isEmpty == true, "\(page["unlabelled"] ?? "?")")
        #expect(page["phoneOverflow"] as? Int == 0)
        #expect((page["pageErrors"] as? [String])?.isEmpty == true, "\(page["pageErrors"] ?? "?")")
        #expect((page["consoleErrors"] as? [String])?.contains { $0.contains("Content Security Policy") } == false, "\(page["consoleErrors"] ?? "?")")

        // Another origin: the allowed one uploads (and reads Location and Upload-Offset); the browser refuses the other.
        let crossAllowed = try #require(page["crossOrigin_allowed"] as? [String: Any])
        let small = try Fixture.bytes("edge/grey.jpg")
        #expect(crossAllowed["created"] as? Int == 201 && crossAllowed["patched"] as? Int == 204, "\(crossAllowed)")
        #expect(crossAllowed["offset"] as? String == String(small.count) && (crossAllowed["location"] as? String)?.hasPrefix(server.base) == true)
        #expect(server.storedKeys.contains("user_photos/u1/web/allowed.jpg"))
        #expect((page["crossOrigin_refused"] as? [String: Any])?["error"] as? String == "TypeError: Failed to fetch")
        #expect(!server.storedKeys.contains("user_photos/u1/web/refused.jpg"))
        #expect(FileManager.default.fileExists(atPath: screenshot))
        print("web page: progress \(Set(progress).sorted()); reload: \(before.values.first ?? 0) bytes before, \(after.values.first ?? 0) after, \(total.values.first ?? 0) in all for \(size); offline: \(offline.values.first ?? 0) bytes received")
    }
}

/// The page's files and CORS, through the router in-process.
@Suite struct WebRoutesTests {
    @Test func thePageAndItsFilesWithTheirHeaders() async throws {
        try await SeededRouter.run { seeded in
            let page = try await seeded.api.send("GET", "/", headers: [:], body: nil)
            #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8" && page.body.contains("<script type=\"module\" src=\"/web/app.js\">"))
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'; script-src 'self'") == true)
            #expect(page.header("X-Frame-Options") == "DENY" && page.header("X-Content-Type-Options") == "nosniff")
            let etag = try #require(page.header("ETag"))
            #expect(try await seeded.api.send("GET", "/", headers: ["If-None-Match": etag], body: nil).status == 304)
            for (file, type) in [("app.js", "text/javascript"), ("tus.js", "text/javascript"), ("api.js", "text/javascript"), ("style.css", "text/css"), ("icon.svg", "image/svg+xml")] {
                let answer = try await seeded.api.send("GET", "/web/\(file)", headers: [:], body: nil)
                #expect(answer.status == 200 && answer.header("Content-Type")?.hasPrefix(type) == true && !answer.body.isEmpty, "\(file)")
            }
            for missing in ["/web/nope.js", "/web/..%2FPackage.swift", "/web/index.html.bak", "/web/"] {
                #expect(try await seeded.api.send("GET", missing, headers: [:], body: nil).status == 404, "\(missing)")
            }
        }
    }

    @Test func crossOriginRequestsOnlyFromAllowedOrigins() async throws {
        let app = "https://app.example.com"
        try await SeededRouter.run(configure: { $0.corsOrigins = [app] }) { seeded in
            let preflight = ["Origin": app, "Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "authorization,tus-resumable,upload-offset"]
            let allowed = try await seeded.api.send("OPTIONS", "/files/abc", headers: preflight, body: nil)
            #expect(allowed.status == 204 && allowed.header("Access-Control-Allow-Origin") == app && allowed.header("Vary") == "Origin")
            #expect(allowed.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
            #expect(allowed.header("Access-Control-Allow-Headers")?.contains("Upload-Offset") == true && allowed.header("Access-Control-Allow-Credentials") == nil)
            var other = preflight
            other["Origin"] = "https://evil.example"
            let refused = try await seeded.api.send("OPTIONS", "/files/abc", headers: other, body: nil)
            #expect(refused.status == 403 && refused.header("Access-Control-Allow-Origin") == nil)

            // Answers to an allowed origin, refusals included, carry the headers its script needs.
            let unauthorised = try await seeded.api.send("POST", "/files/", headers: ["Origin": app, "Tus-Resumable": "1.0.0", "Upload-Length": "10"], body: nil)
            #expect(unauthorised.status == 401 && unauthorised.header("Access-Control-Allow-Origin") == app)
            #expect(unauthorised.header("Access-Control-Expose-Headers")?.contains("Upload-Offset") == true)
            let problem = try await seeded.api.send("GET", "/v1/me", headers: ["Origin": app], body: nil)
            #expect(problem.status == 401 && problem.header("Access-Control-Allow-Origin") == app)
            let me = try await seeded.api.send("GET", "/v1/me", headers: ["Origin": app, "Authorization": "Bearer \(TestTokens.hs256(sub: "u1"))"], body: nil)
            #expect(me.status == 200 && me.header("Access-Control-Allow-Origin") == app)
            let foreign = try await seeded.api.send("GET", "/v1/me", headers: ["Origin": "https://evil.example", "Authorization": "Bearer \(TestTokens.hs256(sub: "u1"))"], body: nil)
            #expect(foreign.status == 200 && foreign.header("Access-Control-Allow-Origin") == nil, "no CORS header: the browser keeps the answer from the script")
            // Every answer says it depends on Origin, those without CORS headers too: a browser does not reuse one
            // kept for an <img> (no Origin) or another origin for the allowed origin's script.
            #expect(foreign.header("Vary") == "Origin" && me.header("Vary") == "Origin")
            let plain = try await seeded.api.send("GET", "/v1/me", headers: ["Authorization": "Bearer \(TestTokens.hs256(sub: "u1"))"], body: nil)
            #expect(plain.status == 200 && plain.header("Vary") == "Origin" && plain.header("Access-Control-Allow-Origin") == nil)
        }
        try await SeededRouter.run(configure: { $0.corsOrigins = ["*"] }) { seeded in
            let any = try await seeded.api.send("GET", "/health", headers: ["Origin": "https://anywhere.example"], body: nil)
            #expect(any.header("Access-Control-Allow-Origin") == "*" && any.header("Access-Control-Allow-Credentials") == nil)
        }
        try await SeededRouter.run { seeded in
            let none = try await seeded.api.send("GET", "/health", headers: ["Origin": app], body: nil)
            #expect(none.header("Access-Control-Allow-Origin") == nil, "no origin is allowed by default")
            #expect(none.header("Vary") == nil, "nothing depends on Origin then")
            // A preflight from any origin: 403, as the README says, not the tus route's 204 for OPTIONS.
            let preflight = try await seeded.api.send("OPTIONS", "/files/abc", headers: ["Origin": app, "Access-Control-Request-Method": "PATCH"], body: nil)
            #expect(preflight.status == 403 && preflight.header("Access-Control-Allow-Origin") == nil)
            // tus discovery (OPTIONS without a preflight's headers) is still answered.
            #expect(try await seeded.api.send("OPTIONS", "/files/", headers: [:], body: nil).status == 204)
        }
    }
}
