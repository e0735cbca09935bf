package import AsyncHTTPClient
import Crypto
import Foundation
package import NIOCore
import NIOHTTP1

/// tus 1.0.0 over HTTP (core, creation, creation-with-upload, termination, checksum, expiration),
/// with AsyncHTTPClient.
struct TusClient: UploadTransport {
    let endpoint: URL
    let client: HTTPClient
    let timeout: Duration
    let server: ServerInfo
    /// Origins besides the endpoint's that may hold upload URLs (and so receive the credentials).
    var trustedOrigins: Set<String> = []

    static let version = "1.0.0"

    /// What the server said it supports (`OPTIONS`), and what of it we use.
    struct ServerInfo: Sendable, Equatable {
        /// Send `Upload-Checksum: sha1 …` with every request carrying data.
        var checksum = false
        /// Send the first chunk with the `POST` (creation-with-upload). Not together with checksums:
        /// the checksum extension covers PATCH requests, and servers (resumable-upload 0.3.0 among them)
        /// store a POST's body without checking its `Upload-Checksum`, so a verified PATCH is worth
        /// the extra round trip.
        var creationWithUpload = false
        /// Not a tus server: one that speaks the IETF resumable-upload draft at this interop version.
        var ietfDraftVersion: Int?
    }

    /// Asks the server which extensions it supports (`OPTIONS`); nil when it did not answer. With
    /// `askingForDraft`, the request also offers the IETF draft's interop version 6, and a server that
    /// answers with that protocol's header (and not tus's) is recorded as speaking it.
    static func discover(
        endpoint: URL, client: HTTPClient, timeout: Duration, authorization: String?, checksums: Bool, askingForDraft: Bool = false
    ) async -> ServerInfo? {
        var request = HTTPClientRequest(url: endpoint.absoluteString)
        request.method = .OPTIONS
        request.headers.add(name: "Tus-Resumable", value: version)
        if askingForDraft { request.headers.add(name: "Upload-Draft-Interop-Version", value: "6") }
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        guard let response = try? await client.execute(request, timeout: timeAmount(timeout)) else { return nil }
        func list(_ name: String) -> Set<String> {
            Set((response.headers.first(name: name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        }
        _ = try? await response.body.collect(upTo: 1 << 16)
        // A draft server answers with its interop version, or (NIOResumableUpload) with its Upload-Limit.
        if askingForDraft, (200..<300).contains(response.status.code), response.headers.first(name: "Tus-Version") == nil,
            response.headers.first(name: "Upload-Draft-Interop-Version") != nil || response.headers.first(name: "Upload-Limit") != nil
        {
            let draft = response.headers.first(name: "Upload-Draft-Interop-Version").flatMap { Int($0) } ?? 6
            return ServerInfo(ietfDraftVersion: ResumableDraftClient.versions.contains(draft) ? draft : 6)
        }
        let extensions = list("Tus-Extension")
        let checksum = checksums && extensions.contains("checksum") && list("Tus-Checksum-Algorithm").contains("sha1")
        return ServerInfo(checksum: checksum, creationWithUpload: !checksum && extensions.contains("creation-with-upload"))
    }

    var acceptsDataOnCreate: Bool { server.creationWithUpload }

    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created {
        var http = makeRequest(endpoint.absoluteString, method: .POST, request)
        http.headers.add(name: "Upload-Length", value: String(length))
        var metadata = request.metadata
        metadata["key"] = request.key
        metadata["filename"] = (request.key as NSString).lastPathComponent
        metadata["filetype"] = request.contentType
        metadata["content-type"] = request.contentType
        http.headers.add(name: "Upload-Metadata", value: metadata.sorted { $0.key < $1.key }
            .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ","))
        if !firstChunk.isEmpty { attach(firstChunk, to: &http, sent: sent) }
        let response = try await perform(http, expecting: [201])
        let url = try uploadURL(response.headers.first(name: "Location"), endpoint: endpoint, trustedOrigins: trustedOrigins)
        let offset = firstChunk.isEmpty ? nil : response.headers.first(name: "Upload-Offset").flatMap { Int64($0) }
        return Created(location: url.absoluteString, offset: offset, expires: expiry(of: response))
    }

    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Acknowledgement {
        var http = makeRequest(location, method: .HEAD, request)
        http.headers.add(name: "Cache-Control", value: "no-store")
        return try acknowledgement(of: try await perform(http, expecting: [200, 204]))
    }

    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Acknowledgement {
        var http = makeRequest(location, method: .PATCH, request)
        http.headers.add(name: "Upload-Offset", value: String(offset))
        attach(chunk, to: &http, sent: sent)
        return try acknowledgement(of: try await perform(http, expecting: [204, 200]))
    }

    /// The chunk as the request body, with its checksum.
    private func attach(_ chunk: [UInt8], to http: inout HTTPClientRequest, sent: @escaping @Sendable (Int) -> Void) {
        http.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
        if server.checksum {
            let digest = Data(Insecure.SHA1.hash(data: chunk)).base64EncodedString()
            http.headers.add(name: "Upload-Checksum", value: "sha1 \(digest)")
        }
        http.body = .counting(chunk, sent: sent)
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {
        try await deleteUpload(makeRequest(location, method: .DELETE, request), client: client, timeout: timeout)
    }

    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String { location }

    func chunkSize(forLength length: Int64) -> Int? { nil }

    private func makeRequest(_ url: String, method: HTTPMethod, _ request: UploadRequest) -> HTTPClientRequest {
        uploadRequest(url, method, version: ("Tus-Resumable", Self.version), authorization: request.authorization)
    }

    private func acknowledgement(of response: HTTPClientResponse) throws(TransportFailure) -> Acknowledgement {
        guard let text = response.headers.first(name: "Upload-Offset"), let value = Int64(text) else {
            throw .status(502, "the server's answer has no valid Upload-Offset")
        }
        return Acknowledgement(offset: value, expires: expiry(of: response))
    }

    private func expiry(of response: HTTPClientResponse) -> Date? {
        response.headers.first(name: "Upload-Expires").flatMap(parseHTTPDate)
    }

    private func perform(_ request: HTTPClientRequest, expecting: Set<UInt>) async throws(TransportFailure) -> HTTPClientResponse {
        try await PhotoUpload.perform(request, client: client, timeout: timeout, expecting: expecting)
    }
}

extension HTTPClientRequest.Body {
    /// `bytes` as a body handed to the network in pieces (16 KiB for a small photo, up to 256 KiB for
    /// large chunks), calling `sent` with the bytes handed over so far: progress moves inside a request.
    static func counting(_ bytes: [UInt8], sent: @escaping @Sendable (Int) -> Void) -> Self {
        let piece = Swift.min(256 * 1024, Swift.max(16 * 1024, bytes.count / 16))
        return .stream(CountingChunks(bytes: bytes, piece: piece, sent: sent), length: .known(Int64(bytes.count)))
    }
}

/// A chunk as an async sequence of smaller buffers, reporting each as it is handed to the network,
/// so that even a 100 KB photo shows progress.
struct CountingChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let bytes: [UInt8]
    let piece: Int
    let sent: @Sendable (Int) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let piece: Int
        let sent: @Sendable (Int) -> Void
        var position = 0

        mutating func next() async throws -> ByteBuffer? {
            try Task.checkCancellation()
            guard position < bytes.count else { return nil }
            let end = Swift.min(position + piece, bytes.count)
            let buffer = ByteBuffer(bytes: bytes[position..<end])
            position = end
            sent(end)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, piece: piece, sent: sent) }
}

/// An HTTP date (RFC 9110 IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`), as tus `Upload-Expires` uses.
func parseHTTPDate(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
}

/// A Swift `Duration` as NIO's `TimeAmount`.
package func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}

extension HTTPClient {
    /// The uploader's client: like `HTTPClient.shared`, except that a connection that cannot be
    /// established fails the request at once. AsyncHTTPClient would otherwise retry connecting with
    /// its own growing backoff while the request waits (seen here: a sync against a server just back
    /// waited over a minute); `UploadStateMachine` owns retries, backoff and the retry budget.
    package static let uploads: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
