import HTTPTypes
import Hummingbird
import PhotoServices

/// The API's errors as problem details: a `Problem` as thrown, a `ServiceError` by its rule, anything else 500.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            throw problem
        } catch let error as ServiceError {
            throw Problem(error)
        } catch {
            throw Problem(.internalServerError, "internal", "\(error)")
        }
    }
}
