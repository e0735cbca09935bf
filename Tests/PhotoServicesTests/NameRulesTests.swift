import Foundation
import GRDB
import PhotoServices
import Testing

/// Names people read and ids that become paths: nothing in them may steer a terminal or hide.
@Suite struct NameRulesTests {
    @Test(arguments: [
        ("Eve\n[admin] Ben: hi\u{1B}[31m", "Eve[admin] Ben: hi[31m"), ("  Ana ", "Ana"), ("\u{202E}olleh", "olleh"),
        ("\u{200B}Ben\u{200B}", "Ben"), ("👨\u{200D}👩\u{200D}👧", "👨\u{200D}👩\u{200D}👧"), ("Zoë\u{85}", "Zoë"),
    ])
    func displayNamesAreCleaned(name: String, stored: String) throws {
        let h = try Harness()
        #expect(try h.services.users.add(id: "u9", displayName: name).displayName == stored)
        let created = try h.services.groups.createGroup(creator: "u9", name: "g", participants: ["u2", "u3"])
        let message = try h.services.database.writer.read { db in try String.fetchOne(db, sql: "SELECT text FROM message WHERE groupId = ?", arguments: [created.group.id]) }
        #expect(message == "\(stored) created the group")
        #expect(message?.unicodeScalars.contains { $0.properties.generalCategory == .control } == false)
    }

    @Test(arguments: ["", "   ", "\u{202E}", "\u{200B} \u{200B}", "\u{1B}\u{7}", String(repeating: "x", count: 101)])
    func displayNamesWithNothingVisibleOrTooLongAreRefused(name: String) throws {
        let h = try Harness()
        #expect(throws: ServiceError.self) { try h.services.users.add(id: "u9", displayName: name) }
        #expect(try h.services.users.user("u9") == nil)
    }

    @Test(arguments: [" u5", "u5 ", "u\u{200B}5", "u\u{202E}5", "ü5", "u 5", ".u5", "u5\t"])
    func userIdsOutsideTheSafeAlphabetAreRefused(id: String) throws {
        let h = try Harness()
        #expect(throws: ServiceError.self, "\(id.debugDescription)") { try h.services.users.add(id: id, displayName: "x") }
        #expect(throws: ServiceError.self) { try h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", id]) }
    }

    @Test(arguments: ["u5", "auth0|5f3c", "google-oauth2|1234", "ana@example.com", "Ab_9.x-y+z"])
    func userIdsInTheSafeAlphabetAreAccepted(id: String) throws {
        let h = try Harness()
        #expect(try h.services.users.add(id: id, displayName: "x").id == id)
    }

    @Test func aGroupNameOfOnlyInvisibleCharactersIsEmpty() throws {
        let h = try Harness()
        #expect(throws: ServiceError.groupNameEmpty) { try h.services.groups.createGroup(creator: "u1", name: "\u{202E}", participants: ["u2", "u3"]) }
        #expect(throws: ServiceError.groupNameEmpty) { try h.services.groups.createGroup(creator: "u1", name: "\u{200B}\u{2066}", participants: ["u2", "u3"]) }
        #expect(try h.services.groups.createGroup(creator: "u1", name: "\u{202E}abc", participants: ["u2", "u3"]).group.name == "abc")
        #expect(try h.count("chatGroup") == 1)
    }
}
