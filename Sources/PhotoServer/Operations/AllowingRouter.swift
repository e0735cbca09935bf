import HTTPTypes
import Hummingbird
import Synchronization

/// The router, remembering which methods each path has: a path asked with a method it does not have
/// answers 405 with `Allow` (RFC 9110 §15.5.6) rather than 404, and `OPTIONS` on it answers 204 with
/// `Allow` — once `answerOtherMethods()` has run, after every route was added.
struct AllowingRouter: RouterMethods {
    typealias Context = ServerContext
    let router: Router<ServerContext>
    private let table = MethodTable()

    init(_ router: Router<ServerContext>) { self.router = router }

    @discardableResult func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        table.record(path, [method])
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }

    /// Says that `path` has `methods` answered elsewhere (before the router: `/media/`).
    func answered(_ path: RouterPath, _ methods: Set<HTTPRequest.Method>) { table.record(path, methods) }

    /// The methods a path may be asked with, beside its own: each answered 405 naming its own (`OPTIONS`: 204).
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options, .trace, HTTPRequest.Method("QUERY")!]

    /// Adds, for every path, the answer to each method it does not have. `GET` brings `HEAD` (the router
    /// makes it from the `GET`).
    func answerOtherMethods() {
        for (path, own) in table.paths {
            let allowed = own.union(own.contains(.get) ? [.head] : [])
            let allow = Self.methods.filter { allowed.contains($0) || $0 == .options }.map(\.rawValue).joined(separator: ", ")
            for method in Self.methods where !allowed.contains(method) {
                router.on(path, method: method) { _, _ in
                    guard method != .options else { return Response(status: .noContent, headers: [.allow: allow]) }
                    var response = Problem(.methodNotAllowed, "method", "\(method.rawValue) is not a method of this resource; it has \(allow)").response
                    response.headers[.allow] = allow
                    return response
                }
            }
        }
    }

    /// Paths in the order they were first added, with their methods.
    final class MethodTable: Sendable {
        private let state = Mutex<[(path: RouterPath, methods: Set<HTTPRequest.Method>)]>([])

        func record(_ path: RouterPath, _ methods: Set<HTTPRequest.Method>) {
            state.withLock { paths in
                if let index = paths.firstIndex(where: { $0.path.description == path.description }) {
                    paths[index].methods.formUnion(methods)
                } else {
                    paths.append((path, methods))
                }
            }
        }

        var paths: [(path: RouterPath, methods: Set<HTTPRequest.Method>)] { state.withLock { $0 } }
    }
}
