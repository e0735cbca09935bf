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
        guard let host = request.authority.flatMap(Self.validated) else { return path }
        return "\(scheme)://\(host)\(path)"
    }

    /// `authority` when it is a host name, an IPv4 or a bracketed IPv6 address, with an optional port — nothing that
    /// could end the URL, the header or an HTML attribute it is put in (`Host: a"b<script>` came back in `Location`).
    static func validated(_ authority: String) -> String? {
        var host = Substring(authority)
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") || host.contains("]:") {
            let port = host[host.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else { return nil }
            host = host[..<colon]
        }
        guard !host.isEmpty, host.count <= 255 else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2, host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return authority
        }
        return host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) ? authority : nil
    }

    /// The URL the server is reached at: `publicURL`, else the request's `Host` (`localhost` without one).
    func base(_ request: HTTPRequest) -> String {
        publicURL ?? "\(scheme)://\(request.authority.flatMap(Self.validated) ?? "localhost")"
    }
}
