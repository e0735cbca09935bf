import HTTPTypes

/// The address clients reach the server at, for the URLs it hands out (upload locations, download links).
struct PublicAddress: Sendable {
    /// `--public-url` without a trailing slash (behind a proxy or load balancer); nil: each request's `Host`.
    let publicURL: String?
    /// What a request's `Host` is reached over: `https` when the server speaks TLS itself (`--tls-cert`).
    /// Not the request's own scheme: Hummingbird's HTTP/1 requests say `http` even over TLS.
    let scheme: String

    /// `path` on `publicURL`, else on the request's own `Host` (the client comes back through the same
    /// front door); relative when there is neither.
    func url(_ path: String, request: HTTPRequest) -> String {
        if let publicURL { return publicURL + path }
        guard let host = request.authority, !host.contains("/"), !host.contains("@") else { return path }
        return "\(scheme)://\(host)\(path)"
    }

    /// The URL the server is reached at: `publicURL`, else the request's `Host` (`localhost` without one).
    func base(_ request: HTTPRequest) -> String {
        publicURL ?? "\(scheme)://\(request.authority ?? "localhost")"
    }
}
