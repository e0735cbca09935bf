import Hummingbird

/// What the API's handlers read from the request context: the caller and the path's parameters.
extension ServerContext {
    /// The caller `BearerAuthentication` found; 401 without one.
    func caller() throws(Problem) -> Caller {
        switch identity {
        case .success(let caller): return caller
        case .failure(let error): throw Problem(.unauthorized, "unauthenticated", "not authenticated: \(error.description)")
        }
    }

    /// A path parameter the route declares.
    func parameter(_ name: String) -> String {
        parameters.get(name) ?? ""
    }
}
