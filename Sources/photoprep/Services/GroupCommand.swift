import ArgumentParser
import PhotoBatch
import Foundation
import PhotoServices

struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Group chats: create one (with a photo), change its photo, show it.",
        subcommands: [Create.self, SetPhoto.self, ShowPhoto.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a group; its photo is prepared (group preset) and uploaded to group_photos/{groupId}/photo.jpg.",
            discussion: """
                The group, its system message and the participants' notifications are written together. \
                The photo follows: if it cannot be uploaded now the group stays and the photo is kept \
                pending — 'photoprep sync' uploads it later, also after a restart.
                With --server URL the group is created through that 'photoprep serve' (the token's user is \
                its creator); when the server cannot be reached the whole creation is kept pending in \
                DATA/client.sqlite with its id, and 'photoprep sync --server URL' sends it (once: the id \
                makes a repeat safe), then the photo.
                Exit status: 0 group created and photo uploaded, 1 refused (nothing created), kept pending, \
                or the photo did not upload (the group exists).

                Example:
                  photoprep user add u1 --name Ana; photoprep user add u2 --name Ben; photoprep user add u3 --name Cy
                  photoprep group create --as u1 --name "Hiking" --participant u2 --participant u3 --photo summit.jpg
                  PHOTOPREP_TOKEN=… photoprep group create --server https://photos.example.com --name "Hiking" \
                    --participant u2 --participant u3 --photo summit.jpg
                """)

        @Option(name: .customLong("as"), help: "The signed-in user creating the group (its first admin); not with --server.")
        var caller: String?

        @Option(help: "Group name (trimmed, 1–50 characters).")
        var name: String

        @Option(name: .customLong("participant"), help: "A participant's user id (repeat; at least 2 besides you).")
        var participants: [String] = []

        @Option(help: "Group photo (JPEG, PNG, HEIC, AVIF or WebP).")
        var photo: String?

        @Flag(help: "Return once the group exists; leave the photo to 'photoprep sync'.")
        var noWait = false

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                let group = try await serviceCall {
                    try await client.createGroup(name: name, participants: participants, photo: photo.map { .file($0) })
                }
                if service.json {
                    printJSONLine(GroupLine(
                        event: group.pending == nil ? "created" : "pending", group: group.id, name: group.name, members: group.members,
                        photoJob: group.photoJob, reason: group.pending))
                }
                if let reason = group.pending {
                    if !service.json { print("group \(group.id) \"\(group.name)\" kept pending") }
                    StandardStream.error.write("""
                        the server did not create it: \(reason)
                          it is sent\(group.photoJob == nil ? "" : " (then its photo)") by 'photoprep sync --server \(client.server.absoluteString)'\n
                        """)
                    throw ExitCode(1)
                }
                if !service.json { print("group \(group.id) \"\(group.name)\" created with \(group.members?.count ?? 0) members") }
                guard let job = group.photoJob, !noWait else { return }
                if await follow([(job, "group photo")], in: client.jobs, json: service.json) > 0 { throw ExitCode(1) }
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            let created = try await serviceCall {
                try await services.groups.createGroup(creator: caller, name: name, participants: participants, photo: photo.map { .file($0) })
            }
            if service.json {
                printJSONLine(GroupLine(group: created.group.id, name: created.group.name, members: created.members.map(\.userId), photoJob: created.photoJob))
            } else {
                print("group \(created.group.id) \"\(created.group.name)\" created with \(created.members.count) members")
            }
            guard let job = created.photoJob, !noWait else { return }
            if await follow([(job, "group photo")], in: services.jobs, json: service.json) > 0 { throw ExitCode(1) }
        }
    }

    struct SetPhoto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-photo", abstract: "Replace a group's photo (admins only).")

        @Option(name: .customLong("as"), help: "The signed-in user (an admin of the group); not with --server.")
        var caller: String?

        @Argument(help: "The group id.")
        var group: String

        @Argument(help: "The photo (JPEG, PNG, HEIC, AVIF or WebP).")
        var photo: String

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                let job = try await serviceCall { try await client.setGroupPhoto(groupId: group, photo: .file(photo)) }
                if await follow([(job, "group photo")], in: client.jobs, json: service.json) > 0 { throw ExitCode(1) }
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            let job = try await serviceCall { try await services.groups.setPhoto(caller: caller, groupId: group, photo: .file(photo)) }
            if await follow([(job, "group photo")], in: services.jobs, json: service.json) > 0 { throw ExitCode(1) }
        }
    }

    struct ShowPhoto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a group's photo: its state and, with --server, the download URLs an image view loads (the photo's and its thumbnails').")

        @Option(name: .customLong("as"), help: "The signed-in user (a member of the group); not with --server.")
        var caller: String?

        @Argument(help: "The group id.")
        var group: String

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                printPhoto(try await serviceCall { try await client.groupPhoto(group) }, label: "group \(group)", json: service.json)
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            guard let found = try await serviceCall({ try await services.groups.group(group) }),
                try await serviceCall({ try await services.groups.members(of: group) }).contains(where: { $0.userId == caller })
            else { throw CommandFailure(message: "group \(group): no such group among \(caller)'s") }
            let state = found.photoState == .done ? "ready" : found.photoState.rawValue
            let url = try await serviceCall { try await services.photos.location(of: StoragePath.groupPhoto(groupId: group).key) }
            printPhoto(PhotoLinks(state: state, url: found.photoState == .done ? url : nil), label: "group \(group)", json: service.json)
        }
    }

    struct GroupLine: Encodable {
        var event = "created"
        var group: String
        var name: String
        var members: [String]?
        var photoJob: String?
        var reason: String?
    }
}
