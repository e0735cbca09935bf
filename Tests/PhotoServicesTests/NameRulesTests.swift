import Foundation
import SQLKit
import PhotoServices
import Testing
import TestSupport

/// Names people read and ids that become paths: nothing in them may steer a terminal or hide.
@Suite struct NameRulesTests {
    @Test(arguments: [
        ("Eve\n[admin] Ben: hi\u{1B}[31m", "Eve[admin] Ben: hi[31m"), ("  Ana ", "Ana"), ("\u{202E}olleh", "olleh"),
        ("\u{200B}Ben\u{200B}", "Ben"), ("👨\u{200D}👩\u{200D}👧", "👨\u{200D}👩\u{200D}👧"), ("Zoë\u{85}", "Zoë"),
    ])
    func displayNamesAreCleaned(name: String, stored: String) async throws {
        let h = try await Harness()
        #expect(try await h.services.users.add(id: "u9", displayName: name).displayName == stored)
        let created = try await h.services.groups.createGroup(creator: "u9", name: "g", participants: ["u2", "u3"])
        let message = try await h.services.database.all(Message.self, from: "message", where: "groupId", created.group.id).first?.text
        #expect(message == "\(stored) created the group")
        #expect(message?.unicodeScalars.contains { $0.properties.generalCategory == .control } == false)
    }

    @Test(arguments: ["", "   ", "\u{202E}", "\u{200B} \u{200B}", "\u{1B}\u{7}", String(repeating: "x", count: 101)])
    func displayNamesWithNothingVisibleOrTooLongAreRefused(name: String) async throws {
        let h = try await Harness()
        await #expect(throws: ServiceError.self) { try await h.services.users.add(id: "u9", displayName: name) }
        #expect(try await h.services.users.user("u9") == nil)
    }

    @Test(arguments: [" u5", "u5 ", "u\u{200B}5", "u\u{202E}5", "ü5", "u 5", ".u5", "u5\t"])
    func userIdsOutsideTheSafeAlphabetAreRefused(id: String) async throws {
        let h = try await Harness()
        await #expect(throws: ServiceError.self, "\(id.debugDescription)") { try await h.services.users.add(id: id, displayName: "x") }
        await #expect(throws: ServiceError.self) { try await h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", id]) }
    }

    @Test(arguments: ["u5", "auth0|5f3c", "google-oauth2|1234", "ana@example.com", "Ab_9.x-y+z"])
    func userIdsInTheSafeAlphabetAreAccepted(id: String) async throws {
        let h = try await Harness()
        #expect(try await h.services.users.add(id: id, displayName: "x").id == id)
    }

    /// Lengths count characters; one character under thousands of combining marks is still one, so a character may
    /// have at most 16 scalars — a family emoji (7) or a subdivision flag (7) passes, a 120 KB "a" does not.
    @Test func aCharacterOfThousandsOfCombiningMarksIsRefused() async throws {
        let h = try await Harness()
        let heavy = "a" + String(repeating: "\u{301}", count: 60_000)
        await #expect(throws: ServiceError.self) { try await h.services.users.add(id: "u9", displayName: heavy) }
        await #expect(throws: ServiceError.self) { try await h.services.groups.createGroup(creator: "u1", name: heavy, participants: ["u2", "u3"]) }
        #expect(try await h.services.users.user("u9") == nil)
        #expect(try await h.count("chatGroup") == 0)
        let flag = "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", family = "👨\u{200D}👩\u{200D}👧\u{200D}👦"
        let accented = "e" + String(repeating: "\u{301}", count: 15)
        #expect(try await h.services.users.add(id: "u9", displayName: flag + family + accented).displayName == flag + family + accented)
        #expect(try await h.services.groups.createGroup(creator: "u1", name: flag + family, participants: ["u2", "u3"]).group.name == flag + family)
    }

    @Test func aGroupNameOfOnlyInvisibleCharactersIsEmpty() async throws {
        let h = try await Harness()
        await #expect(throws: ServiceError.groupNameEmpty) { try await h.services.groups.createGroup(creator: "u1", name: "\u{202E}", participants: ["u2", "u3"]) }
        await #expect(throws: ServiceError.groupNameEmpty) { try await h.services.groups.createGroup(creator: "u1", name: "\u{200B}\u{2066}", participants: ["u2", "u3"]) }
        #expect(try await h.services.groups.createGroup(creator: "u1", name: "\u{202E}abc", participants: ["u2", "u3"]).group.name == "abc")
        #expect(try await h.count("chatGroup") == 1)
    }
}
