import Hummingbird
import Logging

extension Authenticator {
    /// The verified caller of `request` (its `Authorization: Bearer` token), named in the request's log
    /// line; why not, logged (never the token).
    func caller(of request: Request, _ context: ServerContext) async throws(Failure) -> Caller {
        do {
            let caller = try await caller(authorization: request.headers[.authorization])
            context.log.authenticated(caller.id)
            return caller
        } catch {
            context.logger.info("not authenticated", metadata: ["reason": "\(error.description)"])
            throw error
        }
    }
}
