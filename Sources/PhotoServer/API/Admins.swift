import Hummingbird
import PhotoServices

/// The server's admins (`serve --admin`): who may see the events and the quarantined photos, and release them.
struct Admins: Sendable {
    let ids: Set<String>

    /// The caller, when an admin; 403 for anyone else.
    func require(_ context: ServerContext, _ what: String) throws -> Caller {
        let caller = try context.caller()
        guard ids.contains(caller.id) else { throw ServiceError.notAllowed("only the server's admins (serve --admin) \(what)") }
        return caller
    }
}
