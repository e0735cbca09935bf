import Crypto
public import Foundation
import PhotoFiles

/// AWS Signature Version 4, for S3 and S3-compatible stores: the `Authorization` header and presigned
/// URLs. Pure functions of their inputs (the time is a parameter), checked in the tests against the
/// published AWS vectors (the SigV4 test suite's get-vanilla family and the S3 API reference examples).
public struct SigV4: Sendable {
    public struct Credentials: Sendable, Hashable {
        public var accessKeyId: String
        public var secretAccessKey: String
        /// For temporary credentials (`AWS_SESSION_TOKEN`): sent as `x-amz-security-token`.
        public var sessionToken: String?

        public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyId = accessKeyId
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    public var credentials: Credentials
    public var region: String
    public var service: String

    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// SHA-256 of an empty payload.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256` (S3), `x-amz-security-token`
    /// (with a session token) and `Authorization`. `headers` are the request's own headers to sign
    /// (`host` is taken from the URL).
    public func sign(
        method: String, url: URL, headers: [(String, String)] = [], payloadHash: String, date: Date
    ) -> [(String, String)] {
        let (stamp, day) = Self.timestamps(date)
        var added = [("x-amz-date", stamp)]
        if service == "s3" { added.append(("x-amz-content-sha256", payloadHash)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let all = [("host", Self.host(url))] + headers + added
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(all)
        let canonical = [
            method, Self.canonicalPath(url), Self.canonicalQuery(url), canonicalHeaders, signedHeaders, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let signature = self.signature(of: Self.stringToSign(canonical, stamp: stamp, scope: scope), day: day)
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return added + [("Authorization", authorization)]
    }

    /// A presigned URL (query-string authentication): anyone holding it may send `method` to `url`
    /// for `expires` seconds without the keys. Only `host` is signed; the payload is `UNSIGNED-PAYLOAD`.
    public func presign(method: String, url: URL, expires: Int, date: Date) -> URL {
        let (stamp, day) = Self.timestamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        var query = components.percentEncodedQueryItems ?? []
        query += [
            URLQueryItem(name: "X-Amz-Algorithm", value: "AWS4-HMAC-SHA256"),
            URLQueryItem(name: "X-Amz-Credential", value: Self.encode("\(credentials.accessKeyId)/\(scope)")),
            URLQueryItem(name: "X-Amz-Date", value: stamp),
            URLQueryItem(name: "X-Amz-Expires", value: String(expires)),
        ]
        if let token = credentials.sessionToken { query.append(URLQueryItem(name: "X-Amz-Security-Token", value: Self.encode(token))) }
        query.append(URLQueryItem(name: "X-Amz-SignedHeaders", value: "host"))
        components.percentEncodedQueryItems = query
        let unsigned = components.url!
        let canonical = [
            method, Self.canonicalPath(unsigned), Self.canonicalQuery(unsigned), "host:\(Self.host(unsigned))\n", "host", "UNSIGNED-PAYLOAD",
        ].joined(separator: "\n")
        let signature = self.signature(of: Self.stringToSign(canonical, stamp: stamp, scope: scope), day: day)
        components.percentEncodedQueryItems = query + [URLQueryItem(name: "X-Amz-Signature", value: signature)]
        return components.url!
    }

    // MARK: - The steps of the algorithm

    static func stringToSign(_ canonicalRequest: String, stamp: String, scope: String) -> String {
        ["AWS4-HMAC-SHA256", stamp, scope, hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
    }

    func signature(of stringToSign: String, day: String) -> String {
        func hmac(_ key: [UInt8], _ text: String) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: key)))
        }
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] { key = hmac(key, part) }
        return hex(hmac(key, stringToSign))
    }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd`, in UTC.
    static func timestamps(_ date: Date) -> (stamp: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), day)
    }

    static func host(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, !(url.scheme == "https" && port == 443), !(url.scheme == "http" && port == 80) else { return host }
        return "\(host):\(port)"
    }

    /// The path, each segment URI-encoded once (S3 does not normalise or double-encode).
    static func canonicalPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        guard !path.isEmpty else { return "/" }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { encode(String($0).removingPercentEncoding ?? String($0)) }.joined(separator: "/")
    }

    /// Query parameters encoded, sorted by name then value, `name=value` joined by `&` (`name=` when empty).
    static func canonicalQuery(_ url: URL) -> String {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQueryItems ?? []
        var pairs: [(name: String, value: String)] = []
        for item in items {
            let value = item.value ?? ""
            pairs.append((encode(item.name.removingPercentEncoding ?? item.name), encode(value.removingPercentEncoding ?? value)))
        }
        pairs.sort { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return pairs.map { pair in pair.name + "=" + pair.value }.joined(separator: "&")
    }

    /// Lower-case names, trimmed values with inner runs of spaces collapsed, sorted by name.
    static func canonicalHeaders(_ headers: [(String, String)]) -> (canonical: String, signed: String) {
        let normalised = headers.map { name, value in
            (name.lowercased(), value.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))
        }.sorted { $0.0 < $1.0 }
        return (normalised.map { "\($0.0):\($0.1)\n" }.joined(), normalised.map(\.0).joined(separator: ";"))
    }

    /// RFC 3986 encoding: everything but `A–Z a–z 0–9 - _ . ~`.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
