import ArgumentParser
import PhotoBatch
import PhotoServices

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Users of the demo services.", subcommands: [Add.self, QuotaCommand.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a user (or rename one).")

        @Argument(help: "The user id (a single path segment: no '/', '..', control characters).")
        var id: String

        @Option(help: "Display name (used in the group's system message).")
        var name: String

        @Option(help: "E-mail address.")
        var email: String?

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            let services = try await service.services()
            let user = try await serviceCall { try await services.users.add(id: id, displayName: name, email: email) }
            print("user \(user.id) (\(user.displayName))")
        }
    }
}
