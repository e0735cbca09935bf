import ArgumentParser
import PhotoBatch
import Foundation
import PhotoServices

struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "Your profile picture and albums.",
        subcommands: [SetPhoto.self, ShowPhoto.self, DeletePhoto.self, AddToAlbum.self, ListAlbum.self, DeleteFromAlbum.self])

    struct SetPhoto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-photo",
            abstract: "Set or replace your profile picture (profile preset, profile_images/{you}/…).",
            discussion: "Your profile points at the new picture once it is uploaded; the old one is deleted then.")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server (the token names you).")
        var caller: String?

        @Argument(help: "The photo (JPEG, PNG, HEIC, AVIF or WebP).")
        var photo: String

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                let job = try await serviceCall { try await client.setProfilePhoto(.file(photo)) }
                if await follow([(job, "profile photo")], in: client.jobs, json: service.json) > 0 { throw ExitCode(1) }
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            let job = try await serviceCall { try await services.profiles.setProfilePhoto(caller: caller, photo: .file(photo)) }
            if await follow([(job, "profile photo")], in: services.jobs, json: service.json) > 0 { throw ExitCode(1) }
        }
    }

    struct ShowPhoto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show your profile picture: its state and, with --server, the download URLs an image view loads (the picture's and its thumbnails').")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server.")
        var caller: String?

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                printPhoto(try await serviceCall { try await client.profilePhoto() }, label: "profile picture", json: service.json)
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            guard let user = try await serviceCall({ try await services.users.user(caller) }) else {
                throw CommandFailure(message: "\(caller) is not a user")
            }
            var url: String?
            if let key = user.profilePhotoKey { url = try await serviceCall { try await services.photos.location(of: key) } }
            printPhoto(PhotoLinks(state: url == nil ? "none" : "ready", url: url), label: "profile picture", json: service.json)
        }
    }

    struct DeletePhoto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete-photo", abstract: "Remove your profile picture (and its thumbnails).")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server.")
        var caller: String?

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                return try await serviceCall { try await client.deleteProfilePhoto() }
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            try await serviceCall { try await services.profiles.deleteProfilePhoto(caller: caller) }
        }
    }

    struct AddToAlbum: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-photos", abstract: "Add photos to one of your albums (photo preset, user_photos/{you}/{album}/…).")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server (the token names you).")
        var caller: String?

        @Option(help: "The album.")
        var album: String

        @Argument(help: "Photos (JPEG, PNG, HEIC, AVIF or WebP).")
        var photos: [String]

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            var jobs: [(id: String, label: String)] = []
            if let client = try await service.client(as: caller) {
                for photo in photos { jobs.append((try await serviceCall { try await client.addAlbumPhoto(album: album, photo: .file(photo)) }, photo)) }
                if await follow(jobs, in: client.jobs, json: service.json) > 0 { throw ExitCode(1) }
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            for photo in photos {
                jobs.append(try await serviceCall { (try await services.profiles.addAlbumPhoto(caller: caller, album: album, photo: .file(photo)).job, photo) })
            }
            if await follow(jobs, in: services.jobs, json: service.json) > 0 { throw ExitCode(1) }
        }
    }

    struct ListAlbum: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "album",
            abstract: "List the photos of one of your albums: id, state and stored location; with --server, their download URLs (and thumbnails').")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server.")
        var caller: String?

        @Argument(help: "The album.")
        var album: String

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                for photo in try await serviceCall({ try await client.albumPhotos(album) }) {
                    if service.json { printJSONLine(photo); continue }
                    print("\(photo.id)  \(photo.state)  \(photo.downloadURL ?? photo.url ?? "-")")
                    printThumbnails(photo.thumbnails)
                }
                return
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            let photos = try await serviceCall { try await services.profiles.albumPhotos(caller: caller, album: album) }
            let stored = try await serviceCall { try await services.photos.photos(photos.map(\.key)) }
            for photo in photos {
                print("\(photo.id)  \(photo.state.rawValue)  \(stored[photo.key]?.location ?? "-")")
            }
        }
    }

    struct DeleteFromAlbum: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-album-photo", abstract: "Delete one of your album photos (its id as 'profile album' lists it), and its thumbnails.")

        @Option(name: .customLong("as"), help: "The signed-in user; not with --server.")
        var caller: String?

        @Option(help: "The album.")
        var album: String

        @Argument(help: "The photo's id.")
        var photoId: String

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            if let client = try await service.client(as: caller) {
                return try await serviceCall { try await client.deleteAlbumPhoto(album: album, photoId: photoId) }
            }
            let services = try await service.services()
            let caller = try service.caller(caller)
            try await serviceCall { try await services.profiles.deleteAlbumPhoto(caller: caller, photoId: photoId) }
        }
    }
}
