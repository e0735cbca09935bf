import HTTPTypes
import Hummingbird
import Logging
import PhotoServices

/// The API's errors as problem details: a `Problem` as thrown, a `ServiceError` by its rule — the database's
/// or the storage's failure as a `DependencyFailure` (503/507, logged and counted) — anything else a 500
/// whose detail goes to the log, not to the client.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            throw problem
        } catch let error as ServiceError {
            if let failure = DependencyFailure(error) { failure.report(context.logger, metrics) }
            throw Problem(error)
        } catch let error as UploadStoreFailure {
            let failure = DependencyFailure(error)
            failure.report(context.logger, metrics)
            throw Problem(failure)
        } catch {
            context.logger.error("internal error", metadata: ["detail": "\(error)"])
            throw Problem(.internalServerError, "internal", "the server failed to answer this request")
        }
    }
}
