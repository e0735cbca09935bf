import Foundation
import SQLKit
import PhotoPrep
import PhotoServices
import Testing
import TestSupport

/// The services' remote mode (`PhotoClient`, `--server`) against the built server: offline-first
/// group creation, sent once whatever happens in between, with its photo behind it.
@Suite struct ServeClientTests {
    /// What the server holds for group `id`: the group, its members, messages and notifications.
    struct ServerGroup {
        var group: ChatGroup?
        var members: [GroupMember]
        var messages: [Message]
        var notifications: [GroupNotification]
    }

    static func serverGroup(_ seeded: SeededServer, _ id: String) async throws -> ServerGroup {
        let database = try await seeded.database()
        return ServerGroup(
            group: try await database.one(ChatGroup.self, from: "chatGroup", id: id),
            members: try await database.all(GroupMember.self, from: "groupMember", where: "groupId", id, orderBy: "userId"),
            messages: try await database.all(Message.self, from: "message", where: "groupId", id, orderBy: "id"),
            notifications: try await database.all(GroupNotification.self, from: "notification", where: "groupId", id, orderBy: "userId"))
    }

    /// The group exists once on the server, exactly as a creation by u1 (Ana) with u2 and u3 leaves it.
    static func expectCreatedOnce(_ seeded: SeededServer, _ id: String, name: String) async throws {
        let state = try await serverGroup(seeded, id)
        #expect(state.group?.name == name && state.group?.createdBy == "u1")
        #expect(state.members.map(\.userId) == ["u1", "u2", "u3"] && state.members.map(\.isAdmin) == [true, false, false])
        #expect(state.messages.map(\.text) == ["Ana created the group"] && state.messages.allSatisfy { $0.isSystem && $0.sender == "system" })
        #expect(state.notifications.map(\.userId) == ["u2", "u3"])
        #expect(state.notifications.allSatisfy { $0.deepLink == "photoprep://groups/\(id)" })
        #expect(try await seeded.database().count("chatGroup", where: "name", name) == 1)
    }

    /// The issue's scenario through the command, process by process: the server stopped, a group
    /// created with a photo (kept pending), the client started again with the server back: the group
    /// exists once, with its photo, its system message and one notification per other participant.
    @Test func aGroupCreatedOfflineIsCreatedOnceWithItsPhotoAfterARestart() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        try await onThread { server.stop() }
        let client = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: client) }
        let environment = ["PHOTOPREP_TOKEN": TestTokens.hs256(sub: "u1")]
        let common = ["--server", server.base, "--data", client.path, "--json"]

        let offline = try await onThread {
            try photoprepBlocking(
                ["group", "create", "--name", "  Summit day ", "--participant", "u2", "--participant", "u3", "--participant", "u2",
                 "--photo", Fixture.path("orientation/landscape_6.jpg"), "--retry-seconds", "2"] + common,
                environment: environment)
        }
        #expect(offline.status == 1, "\(offline.stderr)")
        #expect(offline.stderr.contains("Connection refused") && offline.stderr.contains("photoprep sync --server \(server.base)"))
        let line = try #require(offline.jsonLines.first)
        #expect(line["event"] as? String == "pending" && line["name"] as? String == "Summit day")
        let id = try #require(line["group"] as? String)
        #expect(UUID(uuidString: id) != nil)

        // Kept in the client's database, its photo held back until the server has the group.
        let database = try await AppDatabase(path: client.appendingPathComponent("client.sqlite").path, role: .client)
        let pending = try await database.all(PendingGroup.self, from: "pendingGroup")
        #expect(pending.map(\.id) == [id] && pending.map(\.state) == [.pending] && pending.first?.participants == ["u2", "u3"])
        let job = try #require(try await database.one(PhotoJob.self, from: "photoJob", id: pending.first?.photoJob ?? ""))
        #expect(job.waitsFor == id && job.state == .pending && job.attempts == 0)
        #expect(try await Self.serverGroup(seeded, id).group == nil)

        // Without the server a sync keeps it (and says so).
        let stillOffline = try await photoprep(["sync", "--retry-seconds", "1"] + common, environment: environment)
        #expect(stillOffline.status == 1)
        #expect(stillOffline.jsonLines.contains { $0["group"] as? String == id && $0["state"] as? String == "pending" })

        try await onThread { try server.start() }
        let synced = try await photoprep(["sync"] + common, environment: environment)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.jsonLines.contains { $0["group"] as? String == id && $0["state"] as? String == "created" })
        let finished = try #require(synced.jsonLines.first { $0["event"] as? String == "finished" })
        let key = "group_photos/\(id)/photo.jpg"
        // The client keeps the photo's download URL: never where the server stores it.
        let finishedURL = try #require(finished["url"] as? String)
        #expect(finishedURL.hasPrefix("\(seeded.server.base)/media/\(key)?v="), "\(finishedURL)")

        try await Self.expectCreatedOnce(seeded, id, name: "Summit day")
        let group = try #require(try await Self.serverGroup(seeded, id).group)
        #expect(group.photoState == .done)
        #expect(try await ServeReadTests.fetch(finishedURL).bytes == seeded.server.stored(key))
        // What is stored is the server's normalisation of the photo: upright, no EXIF, within the preset.
        _ = try checkNormalised(server.stored(key), preset: .group, portrait: false)
        #expect(try await database.one(PendingGroup.self, from: "pendingGroup", id: id)?.state == .created)
        #expect(try await database.one(PhotoJob.self, from: "photoJob", id: job.id)?.state == .done)

        // The photo as an app shows it: a download URL that needs no token, and its thumbnails.
        let shown = try await photoprep(["group", "show", id] + common, environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        let links = try #require(shown.jsonLines.first)
        #expect(links["state"] as? String == "ready")
        #expect(try await ServeReadTests.fetch(try #require(links["downloadURL"] as? String)).bytes == server.stored(key))
        #expect((links["thumbnails"] as? [[String: Any]])?.compactMap { $0["edge"] as? Int } == [128, 256])
        let profile = try await photoprep(["profile", "show"] + common, environment: environment)
        #expect(profile.status == 0 && profile.jsonLines.first?["state"] as? String == "none", "\(profile.stdout) \(profile.stderr)")

        // Once: another sync sends nothing, and the server still has one group, one message, two notifications.
        let again = try await photoprep(["sync"] + common, environment: environment)
        #expect(again.status == 0 && !again.jsonLines.contains { $0["group"] != nil })
        try await Self.expectCreatedOnce(seeded, id, name: "Summit day")
    }

    /// The answer to a creation is lost (the client died after the server created the group): the
    /// creation is sent again with the same id, and the server answers it as the first time.
    @Test func aCreationSentAgainAfterALostAnswerMakesOneGroup() async throws {
        let seeded = try await SeededServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try await PhotoClient(server: URL(string: seeded.server.base)!, folder: folder) { TestTokens.hs256(sub: "u1") }
        let created = try await client.createGroup(name: "Lost answer", participants: ["u2", "u3"])
        #expect(created.pending == nil && created.members == ["u1", "u2", "u3"])
        try await Self.expectCreatedOnce(seeded, created.id, name: "Lost answer")

        // As if the process had died before it recorded the answer.
        try await client.database.write { db in
            try await db.update("pendingGroup").set("state", to: "pending").where("id", .equal, created.id).run()
        }
        let report = await client.sync()
        #expect(report.groups.map(\.id) == [created.id] && report.groups.map(\.state) == [.created])
        #expect(report.groups.first?.attempts == 2)
        try await Self.expectCreatedOnce(seeded, created.id, name: "Lost answer")
        // The same id from someone else is not theirs to re-send.
        let other = try await PhotoClient(server: URL(string: seeded.server.base)!, folder: try temporaryFolder()) { TestTokens.hs256(sub: "u2") }
        await #expect(throws: ServiceError.self) { try await other.createGroup(name: "Taken", participants: ["u1", "u3"], id: created.id) }
        try await Self.expectCreatedOnce(seeded, created.id, name: "Lost answer")
    }

    /// What only the server can refuse (an unknown participant) is refused at sync: nothing is created
    /// there, the photo is not uploaded, and the client says why. What the client can check, it
    /// checks before keeping anything, offline too.
    @Test func refusalsOnlineOfflineAndAtSync() async throws {
        let seeded = try await SeededServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = URL(string: seeded.server.base)!
        let client = try await PhotoClient(server: base, folder: folder) { TestTokens.hs256(sub: "u1") }

        // Online: the server's refusal, thrown; nothing kept here or there.
        await #expect(throws: ServiceError.rejected("the server refused group 6f1f7a4e-2a57-4c2e-9d7e-3f4a7e0b1c2d: unknown user: u9")) {
            try await client.createGroup(name: "Nope", participants: ["u2", "u9"], id: "6F1F7A4E-2A57-4C2E-9D7E-3F4A7E0B1C2D")
        }
        let leftovers = (try await client.pendingGroups().count, try await client.jobs.unfinished().count)
        #expect(leftovers == (0, 0))

        try await onThread { seeded.server.stop() }
        // Offline, the rules the client knows: nothing kept.
        await #expect(throws: ServiceError.groupNameTooLong(51)) {
            try await client.createGroup(name: String(repeating: "x", count: 51), participants: ["u2", "u3"])
        }
        await #expect(throws: ServiceError.tooFewParticipants(1)) { try await client.createGroup(name: "Two", participants: ["u2", "u1", "u2"]) }
        #expect(try await client.pendingGroups().isEmpty)

        // Offline, what only the server knows: kept, then refused at sync.
        let kept = try await client.createGroup(name: "Ghost", participants: ["u2", "u9"], photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        #expect(kept.pending != nil && kept.members == nil)
        try await onThread { try seeded.server.start() }
        let report = await client.sync()
        #expect(report.groups.map(\.state) == [.refused])
        #expect(report.groups.first?.error?.contains("unknown user: u9") == true)
        let job = try await client.jobs.wait(try #require(kept.photoJob))
        #expect(job.state == .failed && job.error?.contains("unknown user: u9") == true)
        #expect(try await Self.serverGroup(seeded, kept.id).group == nil)
        #expect(!seeded.server.storedKeys.contains { $0.hasPrefix("group_photos/\(kept.id)") })
        #expect(try await client.pendingGroups().map(\.state) == [.refused])
        // A refused creation is not sent again.
        #expect(await client.sync().groups.isEmpty)
    }

    /// Photos through the client go to the server's upload endpoint, with the same events as the
    /// embedded services; the profile picture lands in the signed-in user's folder.
    @Test func photosThroughTheClient() async throws {
        let seeded = try await SeededServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try await PhotoClient(server: URL(string: seeded.server.base)!, folder: folder) { TestTokens.hs256(sub: "u1") }
        let job = try await client.setProfilePhoto(.file(Fixture.path("orientation/landscape_6.jpg")))
        var events: [PhotoJobEvent] = []
        for await event in await client.jobs.events(job) { events.append(event) }
        guard case .finished(let url) = events.last else { Issue.record("no finish: \(events)"); return }
        #expect(events.contains { if case .progress = $0 { true } else { false } })
        let user = try #require(try await seeded.database().one(User.self, from: "user", id: "u1"))
        let key = try #require(user.profilePhotoKey)
        #expect(url.hasPrefix("\(seeded.server.base)/media/\(key)?v="), "the photo's download URL: \(url)")
        #expect(key.hasPrefix("profile_images/u1/"))
        _ = try checkNormalised(seeded.server.stored(key), preset: .profile, portrait: false)

        // A group photo by a non-admin is refused by the server: failed, nothing stored.
        let u2 = try await PhotoClient(server: URL(string: seeded.server.base)!, folder: try temporaryFolder()) { TestTokens.hs256(sub: "u2") }
        let refused = try await u2.jobs.wait(try u2.setGroupPhoto(groupId: seeded.groupId, photo: .file(Fixture.path("photos/storm-1920x1280.jpg"))))
        #expect(refused.state == .failed && refused.error?.contains("403") == true)
        #expect(!seeded.server.storedKeys.contains("group_photos/\(seeded.groupId)/photo.jpg"))
    }

    /// Album photos through the command with `--server`: uploaded resumably, normalised and listed by
    /// the server with download URLs and grid thumbnails, deleted (object and thumbnails) through it.
    @Test func albumPhotosThroughTheCommand() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let client = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: client) }
        let environment = ["PHOTOPREP_TOKEN": TestTokens.hs256(sub: "u2")]
        let common = ["--server", server.base, "--data", client.path, "--json"]
        let photos = [Fixture.path("photos/ladybird-2560x1600.jpg"), Fixture.path("orientation/landscape_6.jpg")]

        let added = try await photoprep(["profile", "add-photos", "--album", "trip"] + photos + common, environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let finished = added.jsonLines.filter { $0["event"] as? String == "finished" }
        #expect(finished.count == 2, "\(added.stdout)")
        let asOther = try await photoprep(["profile", "add-photos", "--as", "u1", "--album", "trip", photos[0]] + common, environment: environment)
        #expect(asOther.status != 0 && asOther.stderr.contains("--as"), "the token names the user: \(asOther.stderr)")

        let listed = try await photoprep(["profile", "album", "trip"] + common, environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        let album = listed.jsonLines
        #expect(album.count == 2 && album.allSatisfy { $0["state"] as? String == "ready" }, "\(listed.stdout)")
        #expect(Set(album.compactMap { $0["url"] as? String }) == Set(finished.compactMap { $0["url"] as? String }), "the jobs' URLs are the stored photos'")
        for photo in album {
            let key = try #require(photo["key"] as? String)
            #expect(key.hasPrefix("user_photos/u2/trip/"))
            // Upright: landscape_6.jpg is stored 400×640 with orientation 6.
            _ = try checkNormalised(server.stored(key), preset: .photo, portrait: false)
            #expect(try await ServeReadTests.fetch(try #require(photo["downloadURL"] as? String)).bytes == server.stored(key))
            let thumbnail = try #require((photo["thumbnails"] as? [[String: Any]])?.first, "\(photo)")
            #expect(thumbnail["edge"] as? Int == 512 && max(thumbnail["width"] as? Int ?? 0, thumbnail["height"] as? Int ?? 0) == 512)
            #expect(try await ServeReadTests.fetch(try #require(thumbnail["downloadURL"] as? String)).bytes == server.stored("thumbnails/512/\(key)"))
        }

        // Deleted through the server: the record, the photo and its thumbnail.
        let first = try #require(album.first)
        let (id, key) = (try #require(first["id"] as? String), try #require(first["key"] as? String))
        let deleted = try await photoprep(["profile", "delete-album-photo", "--album", "trip", id] + common, environment: environment)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(server.stored(key) == nil && server.stored("thumbnails/512/\(key)") == nil)
        #expect(try await ServeReadTests.fetch(try #require(first["downloadURL"] as? String)).status == 404)
        let after = try await photoprep(["profile", "album", "trip"] + common, environment: environment)
        #expect(after.jsonLines.compactMap { $0["id"] as? String } == album.dropFirst().compactMap { $0["id"] as? String })
        let again = try await photoprep(["profile", "delete-album-photo", "--album", "trip", id] + common, environment: environment)
        #expect(again.status != 0 && again.stderr.contains(id), "\(again.stderr)")
    }
}
