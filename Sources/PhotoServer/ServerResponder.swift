import Hummingbird

/// Every request's first stop. `GET`/`HEAD /media/…` — the stored photos image views load, by far the
/// most frequent request — pass the same middleware as every route (request log, CORS, authentication)
/// straight to `MediaRoutes`, without the router's lookup of a route (a trie walk that costs as much as a
/// fifth of a thumbnail's answer); everything else goes to the router.
struct ServerResponder: HTTPResponder {
    let routes: RouterResponder<ServerContext>
    let log: RequestLogMiddleware
    let cors: CrossOrigin
    let authentication: BearerAuthentication
    let media: MediaRoutes

    func respond(to request: Request, context: ServerContext) async throws -> Response {
        guard MediaRoutes.answers(request) else {
            var response = try await routes.respond(to: request, context: context)
            CurrentConnection.settle(&response, for: request, read: context.log.bytes)
            return response
        }
        do {
            return try await log.handle(request, context: context) { request, context in
                try await cors.handle(request, context: context) { request, context in
                    try await authentication.handle(request, context: context) { request, context in
                        try await media.serve(request, context: context)
                    }
                }
            }
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }
}
