import Hummingbird
import Logging

/// Verifies the request's `Authorization: Bearer` token, when it has one, and puts who is calling into the
/// context (`ServerContext.identity`); the caller is named in the request's log line, a failure's reason
/// logged (never the token). It refuses nothing itself: each route answers a missing or failed identity
/// in its own protocol's terms — tus and the IETF draft after their version checks, the API as problem details.
struct BearerAuthentication: RouterMiddleware {
    typealias Context = ServerContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authorization = request.headers[.authorization] else { return try await next(request, context) }
        var context = context
        do {
            let caller = try await authenticator.caller(authorization: authorization)
            context.log.authenticated(caller.id)
            context.identity = .success(caller)
        } catch {
            context.logger.info("not authenticated", metadata: ["reason": "\(error.description)"])
            context.identity = .failure(error)
        }
        return try await next(request, context)
    }
}
