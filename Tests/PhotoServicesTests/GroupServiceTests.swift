import Foundation
import SQLKit
import PhotoServices
import Testing
import TestSupport

/// Group creation on a real SQLite file and the local store.
@Suite struct GroupServiceTests {
    @Test(arguments: [
        ("a", "a"), ("  Hiking club \n", "Hiking club"), (String(repeating: "x", count: 50), String(repeating: "x", count: 50)),
        ("Tab\tin\u{7}side", "Tabinside"), ("  \(String(repeating: "é", count: 50))  ", String(repeating: "é", count: 50)),
    ])
    func validNamesAreTrimmedAndCleaned(name: String, stored: String) async throws {
        let h = try await Harness()
        let created = try await h.services.groups.createGroup(creator: "u1", name: name, participants: ["u2", "u3"])
        #expect(created.group.name == stored)
        #expect(try await h.services.groups.group(created.group.id)?.name == stored)
    }

    @Test(arguments: [
        ("", ServiceError.groupNameEmpty), ("   \n\t ", .groupNameEmpty), ("\u{1}\u{2}", .groupNameEmpty),
        (String(repeating: "x", count: 51), .groupNameTooLong(51)), (" \(String(repeating: "🙂", count: 51)) ", .groupNameTooLong(51)),
    ])
    func invalidNamesAreRefusedAndNothingIsWritten(name: String, error: ServiceError) async throws {
        let h = try await Harness()
        await #expect(throws: error) { try await h.services.groups.createGroup(creator: "u1", name: name, participants: ["u2", "u3"]) }
        #expect(try await h.count("chatGroup") == 0)
    }

    @Test func participantBoundaries() async throws {
        let h = try await Harness(users: 258)
        let groups = h.services.groups
        await #expect(throws: ServiceError.tooFewParticipants(1)) { try await groups.createGroup(creator: "u1", name: "g", participants: ["u2"]) }
        await #expect(throws: ServiceError.tooFewParticipants(1), "duplicates and the creator do not count") {
            try await groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u2", "u1"])
        }
        await #expect(throws: ServiceError.tooFewParticipants(0)) { try await groups.createGroup(creator: "u1", name: "g", participants: []) }
        let two = try await groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u3", "u3", "u1"])
        #expect(two.members.map(\.userId) == ["u1", "u2", "u3"])

        // 255 others + the creator = 256 members: the largest group; 257 is refused.
        let largest = try await groups.createGroup(creator: "u1", name: "g", participants: users(2...256))
        #expect(try await groups.members(of: largest.group.id).count == 256)
        await #expect(throws: ServiceError.tooManyMembers(257)) { try await groups.createGroup(creator: "u1", name: "g", participants: users(2...257)) }
        await #expect(throws: ServiceError.tooManyMembers(257), "the creator listed again is not counted twice, the 257th still is") {
            try await groups.createGroup(creator: "u1", name: "g", participants: users(1...257))
        }
        let withCreatorListed = try await groups.createGroup(creator: "u1", name: "g", participants: users(1...256))
        #expect(try await groups.members(of: withCreatorListed.group.id).count == 256)
        #expect(try await h.count("chatGroup") == 3)
    }

    @Test func unknownUsersAndPathTricksAreRefused() async throws {
        let h = try await Harness()
        let groups = h.services.groups
        await #expect(throws: ServiceError.unknownUsers(["nobody"])) { try await groups.createGroup(creator: "nobody", name: "g", participants: ["u2", "u3"]) }
        await #expect(throws: ServiceError.unknownUsers(["x9", "x10"])) { try await groups.createGroup(creator: "u1", name: "g", participants: ["u2", "x9", "x10"]) }
        for trick in ["../u2", "u1/..", "..", ".", "", "a\u{0}b", "a\nb", "a\\b"] {
            await #expect(throws: ServiceError.self, "\(trick.debugDescription)") { try await groups.createGroup(creator: "u1", name: "g", participants: ["u2", trick]) }
            await #expect(throws: ServiceError.self, "\(trick.debugDescription)") { try await h.services.users.add(id: trick, displayName: "x") }
        }
        #expect(try await h.count("chatGroup") == 0)
    }

    @Test func creationWritesTheGroupItsMessageAndNotificationsTogether() async throws {
        let h = try await Harness()
        let created = try await h.services.groups.createGroup(creator: "u2", name: "Trip", participants: ["u1", "u3", "u4"])
        let id = created.group.id
        #expect(created.group.photoState == .none)
        let members = try await h.services.groups.members(of: id)
        #expect(members.filter(\.isAdmin).map(\.userId) == ["u2"], "the creator is the first admin")
        let messages = try await h.services.groups.messages(of: id)
        #expect(messages.count == 1)
        #expect(messages.first?.text == "User 2 created the group")
        #expect(messages.first?.sender == "system" && messages.first?.isSystem == true)
        for user in ["u1", "u3", "u4"] {
            let notes = try await h.services.groups.notifications(for: user)
            #expect(notes.count == 1 && notes.first?.groupId == id && notes.first?.deepLink == "photoprep://groups/\(id)")
        }
        #expect(try await h.services.groups.notifications(for: "u2").isEmpty, "the creator gets no notification")
    }

    @Test func aFailureInsideTheTransactionLeavesNoPartialGroup() async throws {
        let h = try await Harness()
        // Make the last step of the transaction fail: the notification for u3 cannot be written.

        // One statement per dialect: a trigger on SQLite, a CHECK constraint on PostgreSQL.
        try await h.services.database.write { db in
            try await db.raw(SQLQueryString(h.services.database.kind == .sqlite
                ? "CREATE TRIGGER refuse_u3 BEFORE INSERT ON notification WHEN NEW.\"userId\" = 'u3' BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
                : "ALTER TABLE notification ADD CONSTRAINT refuse_u3 CHECK (\"userId\" <> 'u3')")).run()
        }
        let error = await #expect(throws: ServiceError.self) {
            try await h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        }
        // The injected failure itself (SQLite's message, PostgreSQL's constraint), not one before the transaction.
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("injected failure") || text.contains("refuse_u3"), "\(text)")
        for table in ["chatGroup", "groupMember", "message", "notification", "photoJob"] {
            #expect(try await h.count(table) == 0, "\(table)")
        }
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: h.folder.appendingPathComponent("state/staging").path)) ?? []
        #expect(staged.isEmpty, "the staged photo was removed: \(staged)")
    }

    @Test func theGroupPhotoIsPreparedAndUploadedInTheBackground() async throws {
        let h = try await Harness()
        let created = try await h.services.groups.createGroup(
            creator: "u1", name: "Storm chasers", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        let job = try #require(created.photoJob)
        var events: [PhotoJobEvent] = []
        for await event in await h.services.jobs.events(job) { events.append(event) }
        guard case .finished(let url) = events.last else { Issue.record("\(events)"); return }
        let group = try #require(try await h.services.groups.group(created.group.id))
        #expect(group.photoState == .done)
        #expect(try await h.services.photos.location(of: "group_photos/\(created.group.id)/photo.jpg") == url, "recorded where the job stored it")
        #expect(url.hasSuffix("group_photos/\(created.group.id)/photo.jpg"))
        let stored = try #require(h.stored("group_photos/\(created.group.id)/photo.jpg"))
        #expect(stored.count < 500 * 1024, "the group preset's budget")
        let size = try decodedSize(stored)
        #expect(size.width == 1920 && size.height == 1280, "not upscaled; decodes whole")
        #expect(events.contains { if case .progress = $0 { true } else { false } })
        // The staged files are gone once the photo is uploaded.
        let staged = try FileManager.default.contentsOfDirectory(atPath: h.folder.appendingPathComponent("state/staging").path)
        #expect(staged.isEmpty, "\(staged)")
    }

    @Test func aBadPhotoFailsTheUploadButNotTheGroup() async throws {
        let h = try await Harness()
        await #expect(throws: ServiceError.self, "not an image: refused before anything is created") {
            try await h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u3"], photo: .file(Fixture.path("edge/photo.gif")))
        }
        #expect(try await h.count("chatGroup") == 0)
        // A PNG that is cut short is only found out when preparing it: the group stays, the photo fails.
        let created = try await h.services.groups.createGroup(
            creator: "u1", name: "g", participants: ["u2", "u3"], photo: .file(Fixture.path("edge/truncated.png")))
        let job = try await h.services.jobs.wait(try #require(created.photoJob))
        #expect(job.state == .failed)
        let group = try #require(try await h.services.groups.group(created.group.id))
        #expect(group.photoState == .failed && group.photoError?.isEmpty == false, "\(group)")
        #expect(try await h.services.photos.location(of: "group_photos/\(created.group.id)/photo.jpg") == nil)
    }

    @Test func onlyAdminsChangeTheGroupPhotoAndName() async throws {
        let h = try await Harness()
        let created = try await h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u3"])
        let id = created.group.id
        await #expect(throws: ServiceError.notAllowed("only the admins of group \(id) change its photo")) {
            try await h.services.groups.setPhoto(caller: "u2", groupId: id, photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        }
        await #expect(throws: ServiceError.unknownUsers(["u9"])) {
            try await h.services.groups.setPhoto(caller: "u9", groupId: id, photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        }
        await #expect(throws: ServiceError.notAllowed("only the admins of group \(id) rename it")) { try await h.services.groups.rename(caller: "u3", groupId: id, to: "mine") }
        #expect(try await h.count("photoJob") == 0)

        try await h.services.groups.rename(caller: "u1", groupId: id, to: "  Renamed ")
        #expect(try await h.services.groups.group(id)?.name == "Renamed")
        let job = try await h.services.groups.setPhoto(caller: "u1", groupId: id, photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        #expect(try await h.services.jobs.wait(job).state == .done)
        let stored = try #require(h.stored("group_photos/\(id)/photo.jpg"))
        let size = try decodedSize(stored)
        #expect(size.width == 2048 && size.height == 1280)
    }

    @Test func concurrentCallersDoNotCorruptEachOther() async throws {
        let h = try await Harness(users: 20)
        let services = h.services
        let photo = Fixture.path("photos/ladybird-2560x1600.jpg")
        let created = await withTaskGroup(of: GroupService.Created?.self) { group in
            for i in 0..<12 {
                group.addTask {
                    try? await services.groups.createGroup(
                        creator: "u\(i + 1)", name: "group \(i)", participants: ["u\(i + 2)", "u\(i + 3)", "u\(i + 4)"],
                        photo: i % 3 == 0 ? .file(photo) : nil)
                }
            }
            var all: [GroupService.Created] = []
            for await result in group { if let result { all.append(result) } }
            return all
        }
        #expect(created.count == 12)
        #expect(created.filter { $0.photoJob != nil }.count == 4, "every third group has a photo")
        for group in created where group.photoJob != nil { #expect(try await services.jobs.wait(group.photoJob!).state == .done) }
        #expect(try await h.count("chatGroup") == 12)
        #expect(try await h.count("groupMember") == 48)
        #expect(try await h.count("message") == 12)
        #expect(try await h.count("notification") == 36)
        for group in created {
            let messages = try await services.groups.messages(of: group.group.id)
            #expect(messages.map(\.text) == ["User \(group.group.createdBy.dropFirst()) created the group"])
        }
    }
}
