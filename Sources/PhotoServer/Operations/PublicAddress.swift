import HTTPTypes

/// The address clients reach the server at, for the URLs it hands out (upload locations).
enum PublicAddress {
    /// `path` on `publicURL` (behind a proxy or load balancer), else on the request's own `Host` (the
    /// client comes back through the same front door); relative when there is neither.
    static func url(_ path: String, publicURL: String?, request: HTTPRequest) -> String {
        if let publicURL { return publicURL + path }
        guard let host = request.authority, !host.contains("/"), !host.contains("@") else { return path }
        return "http://\(host)\(path)"
    }
}
