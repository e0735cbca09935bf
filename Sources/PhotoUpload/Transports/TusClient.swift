import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// tus 1.0.0 over HTTP (core, creation, termination, checksum, expiration), with AsyncHTTPClient.
struct TusClient: UploadTransport {
    let endpoint: URL
    let client: HTTPClient
    let timeout: Duration
    /// Send `Upload-Checksum: sha1 …` with every PATCH (the server advertised it).
    let checksum: Bool

    static let version = "1.0.0"

    /// Asks the server which extensions it supports (`OPTIONS`).
    static func discover(endpoint: URL, client: HTTPClient, timeout: Duration, authorization: String?) async -> (extensions: Set<String>, checksums: Set<String>) {
        var request = HTTPClientRequest(url: endpoint.absoluteString)
        request.method = .OPTIONS
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        guard let response = try? await client.execute(request, timeout: timeAmount(timeout)) else {
            return ([], [])
        }
        func list(_ name: String) -> Set<String> {
            Set((response.headers.first(name: name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return (list("Tus-Extension"), list("Tus-Checksum-Algorithm"))
    }

    func create(length: Int64, request: UploadRequest) async throws(TransportFailure) -> String {
        var http = makeRequest(endpoint.absoluteString, method: .POST, request)
        http.headers.add(name: "Upload-Length", value: String(length))
        var metadata = request.metadata
        metadata["key"] = request.key
        metadata["filename"] = (request.key as NSString).lastPathComponent
        metadata["filetype"] = request.contentType
        metadata["content-type"] = request.contentType
        http.headers.add(name: "Upload-Metadata", value: metadata.sorted { $0.key < $1.key }
            .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ","))
        let response = try await perform(http, expecting: [201])
        guard let location = response.headers.first(name: "Location"),
            let url = URL(string: location, relativeTo: endpoint)?.absoluteURL
        else { throw .status(500, "the server created the upload without a Location header") }
        return url.absoluteString
    }

    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Int64 {
        var http = makeRequest(location, method: .HEAD, request)
        http.headers.add(name: "Cache-Control", value: "no-store")
        return try offset(of: try await perform(http, expecting: [200, 204]))
    }

    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Int64 {
        var http = makeRequest(location, method: .PATCH, request)
        http.headers.add(name: "Upload-Offset", value: String(offset))
        http.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
        if checksum {
            let digest = Data(Insecure.SHA1.hash(data: chunk)).base64EncodedString()
            http.headers.add(name: "Upload-Checksum", value: "sha1 \(digest)")
        }
        http.body = .stream(CountingChunks(bytes: chunk, piece: 16 * 1024, sent: sent), length: .known(Int64(chunk.count)))
        return try self.offset(of: try await perform(http, expecting: [204, 200]))
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {
        let http = makeRequest(location, method: .DELETE, request)
        do {
            _ = try await perform(http, expecting: [204, 200])
        } catch .status(let code, _) where code == 404 || code == 410 {
            return  // already gone
        }
    }

    func objectLocation(_ location: String, request: UploadRequest) -> String { location }

    private func makeRequest(_ url: String, method: HTTPMethod, _ request: UploadRequest) -> HTTPClientRequest {
        var http = HTTPClientRequest(url: url)
        http.method = method
        http.headers.add(name: "Tus-Resumable", value: Self.version)
        if let authorization = request.authorization { http.headers.add(name: "Authorization", value: authorization) }
        return http
    }

    private func offset(of response: HTTPClientResponse) throws(TransportFailure) -> Int64 {
        guard let text = response.headers.first(name: "Upload-Offset"), let value = Int64(text) else {
            throw .status(502, "the server's answer has no valid Upload-Offset")
        }
        return value
    }

    private func perform(_ request: HTTPClientRequest, expecting: Set<UInt>) async throws(TransportFailure) -> HTTPClientResponse {
        do {
            let response = try await client.execute(request, timeout: timeAmount(timeout))
            let body = try await response.body.collect(upTo: 1 << 16)
            guard expecting.contains(response.status.code) else {
                let text = String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
                throw TransportFailure.status(Int(response.status.code), "\(request.method.rawValue) \(request.url): \(response.status.code) \(response.status.reasonPhrase)\(text.isEmpty ? "" : " — \(text.prefix(200))")")
            }
            return response
        } catch let failure as TransportFailure {
            throw failure
        } catch is CancellationError {
            throw .cancelled
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw .transport("\(request.method.rawValue) \(request.url): \(error)")
        }
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

/// A Swift `Duration` as NIO's `TimeAmount`.
func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
