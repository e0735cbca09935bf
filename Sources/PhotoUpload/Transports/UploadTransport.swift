import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The requests of a resumable upload, performed against one destination. `UploadSession` drives
/// them with `UploadStateMachine`; the tus client and the local store implement them.
protocol UploadTransport: Sendable {
    /// `create` may carry the first bytes (tus creation-with-upload), saving a round trip per small photo.
    var acceptsDataOnCreate: Bool { get }
    /// Creates an upload of `length` bytes, sending `firstChunk` with the request when it is not empty.
    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created
    /// The offset the destination holds for the upload at `location`.
    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Acknowledgement
    /// Appends `chunk` at `offset`; `sent` is called as bytes go out. Returns the new offset.
    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Acknowledgement
    /// Deletes a partial upload.
    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure)
    /// Every byte is acknowledged: makes the object if the destination needs a request for that
    /// (S3's CompleteMultipartUpload) and returns its URL.
    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String
    /// The chunk size this destination needs for an upload of `length` bytes (S3: the whole object,
    /// or a fixed part size); nil: the configuration's, growing with the measured rate.
    func chunkSize(forLength length: Int64) -> Int?
}

/// What the destination holds of an upload, and until when it keeps an unfinished one.
struct Acknowledgement: Sendable, Equatable {
    var offset: Int64
    /// tus `Upload-Expires`: after this the server may forget the upload.
    var expires: Date? = nil
}

/// A new upload: its location, the bytes the destination kept of the data sent with the request
/// (nil when none was sent or the destination did not say), and its expiry.
struct Created: Sendable, Equatable {
    var location: String
    var offset: Int64? = nil
    var expires: Date? = nil
}

/// A request that did not succeed: an HTTP status, no answer at all, or an answer the protocol
/// forbids (a redirect, an upload URL on a foreign origin).
enum TransportFailure: Error, Equatable {
    case status(Int, String)
    /// A 429 or 503 saying when to ask again (`Retry-After`).
    case retryLater(Int, String, after: Duration)
    case transport(String)
    case violation(String)
    case cancelled
}

/// The origin of a URL as `scheme://host:port` (the port spelled out), for comparing where requests go.
func origin(of url: URL) -> String? {
    guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    return "\(scheme)://\(host):\(port)"
}

/// `request`, answered with a status in `expecting` (its body read, up to 64 KiB); another status is a
/// `.status` failure naming the request and quoting the server's words.
func perform(_ request: HTTPClientRequest, client: HTTPClient, timeout: Duration, expecting: Set<UInt>) async throws(TransportFailure) -> HTTPClientResponse {
    try await exchange(request, client: client, timeout: timeout, expecting: expecting, limit: 1 << 16) { response, body in
        let text = String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
        let code = Int(response.status.code)
        let message = "\(request.method.rawValue) \(request.url): \(response.status.code) \(response.status.reasonPhrase)\(text.isEmpty ? "" : " — \(text.prefix(200))")"
        if code == 429 || code == 503, let after = retryAfter(response.headers.first(name: "Retry-After")) {
            return .retryLater(code, message, after: after)
        }
        return .status(code, message)
    }.0
}

/// A `Retry-After` (RFC 9110 §10.2.3): seconds, or an HTTP date; at most an hour (a longer wait is the
/// retry budget's to decide, not the server's).
func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
    guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
    let seconds: Double
    if let whole = Int(value), whole >= 0 {
        seconds = Double(whole)
    } else {
        guard let date = parseHTTPDate(value) else { return nil }
        seconds = max(0, date.timeIntervalSince(now))
    }
    return .milliseconds(Int(min(seconds, 3600) * 1000))
}

/// A request to an upload server: `method` on `url` with the protocol's version header and the caller's credentials.
func uploadRequest(_ url: String, _ method: HTTPMethod, version: (name: String, value: String), authorization: String?) -> HTTPClientRequest {
    var http = HTTPClientRequest(url: url)
    http.method = method
    http.headers.add(name: version.name, value: version.value)
    if let authorization { http.headers.add(name: "Authorization", value: authorization) }
    return http
}

/// `DELETE` of a partial upload; one already gone (404, 410) is not an error.
func deleteUpload(_ request: HTTPClientRequest, client: HTTPClient, timeout: Duration) async throws(TransportFailure) {
    do {
        _ = try await perform(request, client: client, timeout: timeout, expecting: [200, 204])
    } catch .status(let code, _) where code == 404 || code == 410 {
        return  // already gone
    }
}

/// The URL of a new upload (its `Location`, resolved against `endpoint`), which gets every later
/// request, credentials included: only on the endpoint's origin or a trusted one.
func uploadURL(_ location: String?, endpoint: URL, trustedOrigins: Set<String>) throws(TransportFailure) -> URL {
    guard let location, let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
        throw .violation("the server created the upload without a Location header")
    }
    guard let target = origin(of: url), target == origin(of: endpoint) || trustedOrigins.contains(target) else {
        throw .violation("the server placed the upload on another origin (\(url.absoluteString)); credentials are sent only to \(origin(of: endpoint) ?? endpoint.absoluteString) (trust it with --allow-origin)")
    }
    return url
}

/// Sends one request and reads its body (up to `limit` bytes). An answer outside `expecting` becomes
/// the failure `refusal` makes of it; no answer becomes `.transport`, cancellation `.cancelled`.
func exchange(
    _ request: HTTPClientRequest, client: HTTPClient, timeout: Duration, expecting: Set<UInt>, limit: Int,
    refusal: (HTTPClientResponse, ByteBuffer) -> TransportFailure
) async throws(TransportFailure) -> (HTTPClientResponse, ByteBuffer) {
    do {
        let response = try await client.execute(request, timeout: timeAmount(timeout))
        let body = try await response.body.collect(upTo: limit)
        if (300..<400).contains(response.status.code), !expecting.contains(response.status.code) {
            // Redirects are not followed: credentials and data go only where they were given for.
            let target = response.headers.first(name: "Location") ?? "nowhere"
            throw TransportFailure.violation("\(request.method.rawValue) \(request.url): the server redirects (\(response.status.code)) to \(target); redirects are not followed")
        }
        guard expecting.contains(response.status.code) else { throw refusal(response, body) }
        return (response, body)
    } catch let failure as TransportFailure {
        throw failure
    } catch is CancellationError {
        throw .cancelled
    } catch {
        if Task.isCancelled { throw .cancelled }
        throw .transport("\(request.method.rawValue) \(request.url): \(networkFailure(error))")
    }
}

/// Why a request got no answer, in the system's words ("Connection refused") rather than NIO's
/// description of them — also when a name resolved to several addresses and each attempt failed.
package func networkFailure(_ error: any Error) -> String {
    if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
    if let error = error as? NIOConnectionError {
        let reasons = error.connectionErrors.map { networkFailure($0.error) } + [error.dnsAAAAError, error.dnsAError].compactMap { $0.map(networkFailure) }
        if let reason = reasons.first { return reason }
    }
    return "\(error)"
}

extension UploadError {
    /// A single request's failure (outside an upload's retries): 401/403 not authorised, other
    /// statuses rejected, no answer as unreachable.
    init(_ failure: TransportFailure, _ what: String) {
        switch failure {
        case .status(let code, let message), .retryLater(let code, let message, _):
            self.init(code == 401 || code == 403 ? .notAuthorized : .rejected, message, status: code)
        case .transport(let message): self.init(.unreachable, message)
        case .violation(let message): self.init(.protocolViolation, message)
        case .cancelled: self.init(.io, "\(what): cancelled")
        }
    }
}
