import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Resumable uploads by the IETF HTTP working group's draft (draft-ietf-httpbis-resumable-upload), as
/// Apple's `URLSession` speaks it, at interop version 3, 5 or 6: the upload is created with
/// `POST {endpoint}{key}` (`Upload-Complete: ?0`, no body: the answer carries its URL), its offset
/// retrieved with `HEAD`, bytes appended with `PATCH` at `Upload-Offset`, and cancelled with `DELETE`.
/// The same `UploadStateMachine` drives it as tus: the same retries, journal and events.
struct ResumableDraftClient: UploadTransport {
    let endpoint: URL
    let client: HTTPClient
    let timeout: Duration
    /// 3, 5 or 6 (what the field names and the append's content type are).
    let interopVersion: Int
    /// The whole upload's length: every append says whether it completes the upload.
    let length: Int64
    /// Origins besides the endpoint's that may hold upload URLs (and so receive the credentials).
    var trustedOrigins: Set<String> = []

    static let versions: Set<Int> = [3, 5, 6]

    /// Every byte goes by `PATCH`: a creation that carried data and was cut off would leave the client
    /// without the upload's URL (the 104 that announces it is not surfaced by the HTTP client).
    var acceptsDataOnCreate: Bool { false }

    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created {
        let path = request.key.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0) }
            .joined(separator: "/")
        var target = endpoint.absoluteString.hasSuffix("/") ? endpoint.absoluteString + path : endpoint.absoluteString + "/" + path
        // The draft has no metadata: a focal point, the one field photoprep's server reads at creation, goes in the query.
        if let focus = request.metadata["focus"]?.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-"))) {
            target += "?focus=" + focus
        }
        var http = makeRequest(target, method: .POST, request)
        setCompleteness(&http, length == 0)
        http.headers.add(name: "Upload-Length", value: String(length))
        http.headers.add(name: "Content-Length", value: "0")
        let response = try await perform(http, expecting: [200, 201])
        let url = try uploadURL(response.headers.first(name: "Location"), endpoint: endpoint, trustedOrigins: trustedOrigins)
        return Created(location: url.absoluteString, offset: response.headers.first(name: "Upload-Offset").flatMap { Int64($0) })
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
        setCompleteness(&http, offset + Int64(chunk.count) == length)
        http.headers.add(name: "Content-Type", value: interopVersion >= 6 ? "application/partial-upload" : "application/octet-stream")
        http.body = .counting(chunk, sent: sent)
        let response = try await perform(http, expecting: [200, 201, 204])
        // A completing append may answer with the application's response, which need not repeat the offset.
        if response.headers.first(name: "Upload-Offset") == nil, offset + Int64(chunk.count) == length {
            return Acknowledgement(offset: length)
        }
        return try acknowledgement(of: response)
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {
        try await deleteUpload(makeRequest(location, method: .DELETE, request), client: client, timeout: timeout)
    }

    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String { location }

    func chunkSize(forLength length: Int64) -> Int? { nil }

    private func makeRequest(_ url: String, method: HTTPMethod, _ request: UploadRequest) -> HTTPClientRequest {
        uploadRequest(url, method, version: ("Upload-Draft-Interop-Version", String(interopVersion)), authorization: request.authorization)
    }

    /// `Upload-Complete` (versions 5, 6) or its inverse `Upload-Incomplete` (version 3), as structured-field booleans.
    private func setCompleteness(_ http: inout HTTPClientRequest, _ complete: Bool) {
        if interopVersion >= 5 {
            http.headers.add(name: "Upload-Complete", value: complete ? "?1" : "?0")
        } else {
            http.headers.add(name: "Upload-Incomplete", value: complete ? "?0" : "?1")
        }
    }

    private func acknowledgement(of response: HTTPClientResponse) throws(TransportFailure) -> Acknowledgement {
        guard let text = response.headers.first(name: "Upload-Offset"), let value = Int64(text), value >= 0 else {
            throw .status(502, "the server's answer has no valid Upload-Offset")
        }
        return Acknowledgement(offset: value)
    }

    private func perform(_ request: HTTPClientRequest, expecting: Set<UInt>) async throws(TransportFailure) -> HTTPClientResponse {
        try await PhotoUpload.perform(request, client: client, timeout: timeout, expecting: expecting)
    }
}
