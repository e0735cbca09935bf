import AsyncHTTPClient
import Crypto
public import Foundation
import NIOCore
import NIOHTTP1
import PhotoFiles

/// An S3-compatible bucket (AWS S3, Ceph RGW, MinIO, R2, GCS's XML API) under `s3://bucket/prefix`:
/// where it is, who signs, how objects are addressed, and the signed requests photoprep sends.
public struct S3Store: Sendable {
    public enum Addressing: String, Sendable {
        /// `https://endpoint/bucket/key` — what self-hosted stores and emulators expect.
        case path
        /// `https://bucket.endpoint/key` — AWS's default.
        case virtual
    }

    public var bucket: String
    /// Prepended to every key (no leading or trailing `/`).
    public var prefix: String
    public var endpoint: URL
    public var addressing: Addressing
    public var signer: SigV4

    public init(bucket: String, prefix: String = "", endpoint: URL, addressing: Addressing, signer: SigV4) {
        self.bucket = bucket
        self.prefix = prefix.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        self.endpoint = endpoint
        self.addressing = addressing
        self.signer = signer
    }

    /// `s3://bucket/prefix`, configured from the usual places: `AWS_ENDPOINT_URL_S3` or
    /// `AWS_ENDPOINT_URL` (default AWS for the region), `AWS_REGION` or `AWS_DEFAULT_REGION`
    /// (default `us-east-1`), `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`
    /// (else the `AWS_PROFILE` profile of `~/.aws/credentials`),
    /// `AWS_S3_ADDRESSING_STYLE` (`path` or `virtual`; default `path` with a custom endpoint, else
    /// `virtual`).
    public init(url: String, environment settings: [String: String] = ProcessInfo.processInfo.environment) throws(UploadError) {
        guard url.hasPrefix("s3://") else { throw UploadError(.rejected, "\(url): not an s3:// URL") }
        let rest = url.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        guard !bucket.isEmpty else { throw UploadError(.rejected, "\(url): no bucket name") }
        let prefix = String(rest.dropFirst(bucket.count))
        let region = settings["AWS_REGION"] ?? settings["AWS_DEFAULT_REGION"] ?? "us-east-1"
        let profile = Self.sharedCredentials(settings)
        guard let key = settings["AWS_ACCESS_KEY_ID"] ?? profile["aws_access_key_id"],
            let secret = settings["AWS_SECRET_ACCESS_KEY"] ?? profile["aws_secret_access_key"], !key.isEmpty, !secret.isEmpty
        else {
            throw UploadError(.notAuthorized, "\(url): no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials)")
        }
        let token = settings["AWS_ACCESS_KEY_ID"] != nil ? settings["AWS_SESSION_TOKEN"] : profile["aws_session_token"]
        let custom = settings["AWS_ENDPOINT_URL_S3"] ?? settings["AWS_ENDPOINT_URL"]
        let endpointText = custom ?? "https://s3.\(region).amazonaws.com"
        guard let endpoint = URL(string: endpointText), endpoint.host != nil else { throw UploadError(.rejected, "\(endpointText): not a valid endpoint URL") }
        let style = settings["AWS_S3_ADDRESSING_STYLE"].flatMap(Addressing.init(rawValue:)) ?? (custom == nil ? .virtual : .path)
        self.init(
            bucket: bucket, prefix: prefix, endpoint: endpoint, addressing: style,
            signer: SigV4(credentials: .init(accessKeyId: key, secretAccessKey: secret, sessionToken: token), region: region))
    }

    /// The profile `AWS_PROFILE` (default `default`) of the shared credentials file
    /// (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`), as the AWS tools read it.
    static func sharedCredentials(_ settings: [String: String]) -> [String: String] {
        let path = settings["AWS_SHARED_CREDENTIALS_FILE"] ?? (settings["HOME"].map { "\($0)/.aws/credentials" } ?? "")
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        let wanted = settings["AWS_PROFILE"] ?? "default"
        var section = ""
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == wanted, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    /// The object's full key: prefix + key.
    public func objectKey(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix)/\(key)" }

    /// The object's URL (path-style or virtual-hosted), with an optional query.
    public func url(for key: String, query: String? = nil) -> URL {
        address(objectKey(key).split(separator: "/", omittingEmptySubsequences: false).map { SigV4.encode(String($0)) }.joined(separator: "/"), query: query)
    }

    /// The bucket's own URL (for listing it), with a query.
    func bucketURL(query: String) -> URL { address("", query: query) }

    /// `encodedPath` in the bucket, path-style or virtual-hosted.
    private func address(_ encodedPath: String, query: String?) -> URL {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
        let base = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        switch addressing {
        case .path:
            components.percentEncodedPath = "\(base)/\(SigV4.encode(bucket))/\(encodedPath)"
        case .virtual:
            components.host = "\(bucket).\(components.host ?? "")"
            components.percentEncodedPath = "\(base)/\(encodedPath)"
        }
        components.percentEncodedQuery = query
        return components.url!
    }

    /// The key (without the prefix) of an object URL of this store, or nil.
    public func key(of location: String) -> String? {
        let base = url(for: "").absoluteString
        guard location.hasPrefix(base) else { return nil }
        let full = String(location.dropFirst(base.count)).removingPercentEncoding ?? ""
        return full.isEmpty ? nil : full
    }

    /// A presigned PUT URL for `key`, valid for `expires` seconds: a client without keys uploads with it.
    public func presignedPUT(key: String, expires: Int = 3600, date: Date = Date()) -> URL {
        signer.presign(method: "PUT", url: url(for: key), expires: expires, date: date)
    }

    /// A presigned GET URL for `key`, valid for `expires` seconds: a reader without keys fetches with it.
    public func presignedGET(key: String, expires: Int = 300, date: Date = Date()) -> URL {
        signer.presign(method: "GET", url: url(for: key), expires: expires, date: date)
    }

    /// The object's bytes (a signed GET), or nil when there is none.
    func download(_ key: String, client: HTTPClient, timeout: Duration = .seconds(60)) async throws(TransportFailure) -> [UInt8]? {
        do {
            let response = try await client.execute(request(.GET, key: key), timeout: timeAmount(timeout))
            let body = try await response.body.collect(upTo: 1 << 30)
            if response.status.code == 404 { return nil }
            guard response.status.code == 200 else { throw TransportFailure.status(Int(response.status.code), "GET \(key): \(response.status)") }
            return Array(buffer: body)
        } catch let failure as TransportFailure {
            throw failure
        } catch {
            throw .transport("GET \(key): \(error)")
        }
    }

    // MARK: - Requests

    /// A signed request. `body` is signed by its SHA-256; `sent` sees bytes as they go out.
    func request(
        _ method: HTTPMethod, key: String, query: String? = nil, headers: [(String, String)] = [], body: [UInt8]? = nil,
        sent: (@Sendable (Int) -> Void)? = nil
    ) -> HTTPClientRequest {
        request(method, url: url(for: key, query: query), headers: headers, body: body, sent: sent)
    }

    /// A signed request to `url` (an object's, or the bucket's).
    func request(
        _ method: HTTPMethod, url: URL, headers: [(String, String)] = [], body: [UInt8]? = nil, sent: (@Sendable (Int) -> Void)? = nil
    ) -> HTTPClientRequest {
        let payloadHash = body.map { hex(sha256($0)) } ?? SigV4.emptyPayloadHash
        var http = HTTPClientRequest(url: url.absoluteString)
        http.method = method
        for (name, value) in headers { http.headers.add(name: name, value: value) }
        for (name, value) in signer.sign(method: method.rawValue, url: url, headers: headers, payloadHash: payloadHash, date: Date()) {
            http.headers.add(name: name, value: value)
        }
        if let body { http.body = .counting(body, sent: sent ?? { _ in }) }
        return http
    }

    func perform(_ request: HTTPClientRequest, expecting: Set<UInt> = [200, 204], client: HTTPClient, timeout: Duration) async throws(TransportFailure) -> (HTTPClientResponse, String) {
        try await Self.perform(request, expecting: expecting, client: client, timeout: timeout)
    }

    /// Sends a request; answers outside `expecting` become `TransportFailure.status` with S3's error code and message.
    static func perform(_ request: HTTPClientRequest, expecting: Set<UInt> = [200, 204], client: HTTPClient, timeout: Duration) async throws(TransportFailure) -> (HTTPClientResponse, String) {
        let (response, body) = try await exchange(request, client: client, timeout: timeout, expecting: expecting, limit: 4 << 20) { response, body in
            failure(status: Int(response.status.code), body: String(buffer: body), request: "\(request.method.rawValue) \(request.url)")
        }
        return (response, String(buffer: body))
    }
}

/// An S3 error answer as a `TransportFailure`, with S3's code and message. A body that arrived
/// damaged (`BadDigest`: the Content-MD5 did not match; `XAmzContentSHA256Mismatch`) is reported as
/// 460, tus's checksum mismatch, so that the state machine sends it again instead of giving up.
func failure(status: Int, body: String, request: String) -> TransportFailure {
    let code = XMLText.first("Code", in: body)
    let message = XMLText.first("Message", in: body).map { ": \($0)" } ?? ""
    let text = "\(request): \(status)\(code.map { " \($0)" } ?? "")\(message)"
    if status == 400, code == "BadDigest" || code == "XAmzContentSHA256Mismatch" { return .status(460, text) }
    return .status(status, text)
}

/// The few values photoprep reads from S3's XML answers.
enum XMLText {
    /// The text of every `<name>…</name>`, in order.
    static func all(_ name: String, in xml: String) -> [String] {
        var values: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex) {
            values.append(unescape(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return values
    }

    static func first(_ name: String, in xml: String) -> String? { all(name, in: xml).first }

    /// Resolves the five named entities and numeric ones (`&#34;`, `&#x22;`); strips `<![CDATA[…]]>`.
    static func unescape(_ text: String) -> String {
        var text = text
        if text.hasPrefix("<![CDATA["), text.hasSuffix("]]>") { return String(text.dropFirst(9).dropLast(3)) }
        let named = ["quot": "\"", "apos": "'", "lt": "<", "gt": ">", "amp": "&"]
        var out = ""
        while let amp = text.firstIndex(of: "&") {
            out += text[..<amp]
            guard let semicolon = text[amp...].firstIndex(of: ";"), text.distance(from: amp, to: semicolon) <= 8 else {
                out += "&"
                text = String(text[text.index(after: amp)...])
                continue
            }
            let entity = String(text[text.index(after: amp)..<semicolon])
            if let value = named[entity] {
                out += value
            } else if entity.hasPrefix("#"), let code = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : UInt32(entity.dropFirst()),
                let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "&\(entity);"
            }
            text = String(text[text.index(after: semicolon)...])
        }
        return out + text
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
