import HTTPTypes
import Hummingbird

/// CORS for web apps on other origins (`--cors-origin`, none by default): a preflight from an allowed
/// origin is answered here (the methods and headers tus, the IETF draft and the API use); an allowed
/// origin's requests, refusals included, get `Access-Control-Allow-Origin` and the upload protocols'
/// headers exposed, so that its script can read `Location` and `Upload-Offset`. Credentials (cookies) are
/// never allowed — the token travels in `Authorization`, which the preflight allows — so `*` is safe.
/// Any other origin gets no CORS header at all (its preflight: 403), and the browser refuses it.
struct CrossOrigin: RouterMiddleware {
    typealias Context = ServerContext
    /// Origins as browsers send them (`https://app.example.com`), or `*` for any.
    let allowed: Set<String>

    /// With origins allowed, every answer says it depends on `Origin` (`Vary`), those without CORS headers too:
    /// a browser must not reuse an answer kept for an `<img>` or another origin for an allowed origin's script.
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let origin = request.headers[.origin]
        let preflight = origin != nil && request.method == .options && request.headers[.accessControlRequestMethod] != nil
        // With no origin allowed, only a preflight is answered here: 403, as for any origin not allowed.
        guard !allowed.isEmpty || preflight else { return try await next(request, context) }
        let permitted = origin.map { allowed.contains("*") || allowed.contains($0) } ?? false
        if let origin, preflight {
            guard permitted else { return Response(status: .forbidden, headers: [.vary: "Origin"]) }
            var headers = allow(origin)
            headers[.accessControlAllowMethods] = "GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS"
            headers[.accessControlAllowHeaders] = Self.requestHeaders
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.vary] = "Origin"
        if let origin, permitted {
            for field in allow(origin) { response.headers[field.name] = field.value }
            response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        }
        return response
    }

    private func allow(_ origin: String) -> HTTPFields {
        [.accessControlAllowOrigin: allowed.contains("*") ? "*" : origin, .vary: "Origin"]
    }

    static let requestHeaders = [
        "Authorization", "Content-Type", "Accept", "Idempotency-Key", "Tus-Resumable", "Upload-Length", "Upload-Metadata",
        "Upload-Offset", "Upload-Concat", "Upload-Defer-Length", "Upload-Checksum", "Upload-Complete", "Upload-Incomplete",
        "Upload-Draft-Interop-Version", "Range", "If-Range", "If-None-Match", "If-Modified-Since", "X-HTTP-Method-Override",
    ].joined(separator: ", ")
    static let exposedHeaders = [
        "Location", "Upload-Offset", "Upload-Length", "Upload-Expires", "Upload-Metadata", "Upload-Complete", "Upload-Limit",
        "Upload-Draft-Interop-Version", "Tus-Resumable", "Tus-Version", "Tus-Max-Size", "Tus-Extension", "Tus-Checksum-Algorithm",
        "Retry-After", "ETag", "Last-Modified", "Content-Range", "Content-Length",
    ].joined(separator: ", ")
}
