import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Uploads to an S3 bucket through the same state machine as tus: an object up to the multipart
/// threshold is one streamed PUT (the "chunk" is the whole object; nothing partial survives a
/// failure, so it is sent again); a larger one is a multipart upload whose "location" is its
/// UploadId, whose offset is the run of complete parts S3 lists (ListParts — so a new process
/// continues it), whose chunks are `parallelParts` parts sent at once, and which is completed with
/// CompleteMultipartUpload or aborted on cancel. Every body carries `Content-MD5` and is signed by
/// its SHA-256.
struct S3Transport: UploadTransport {
    let store: S3Store
    let client: HTTPClient
    let timeout: Duration
    let multipartThreshold: Int
    let partSize: Int
    let parallelParts: Int

    static let singlePut = "put"
    static let multipartPrefix = "multipart:"

    var acceptsDataOnCreate: Bool { false }

    func chunkSize(forLength length: Int64) -> Int? {
        length <= Int64(multipartThreshold) ? Int(max(1, length)) : partSize * parallelParts
    }

    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created {
        guard length > Int64(multipartThreshold) else { return Created(location: Self.singlePut) }
        let http = store.request(.POST, key: request.key, query: "uploads=", headers: objectHeaders(request))
        let (_, body) = try await store.perform(http, expecting: [200], client: client, timeout: timeout)
        guard let id = XMLText.first("UploadId", in: body) else { throw .status(502, "CreateMultipartUpload answered without an UploadId") }
        return Created(location: Self.multipartPrefix + id)
    }

    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Acknowledgement {
        guard let id = uploadId(location) else { return Acknowledgement(offset: 0) }  // a single PUT keeps nothing partial
        var offset: Int64 = 0
        for (number, size, _) in try await listParts(id, key: request.key) {
            // Only the run of whole parts from part 1 counts; a short part can only be the last.
            guard number == Int(offset / Int64(partSize)) + 1, offset % Int64(partSize) == 0 else { break }
            offset += size
        }
        return Acknowledgement(offset: offset)
    }

    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Acknowledgement {
        guard let id = uploadId(location) else {
            guard offset == 0 else { throw .status(409, "a single PUT starts at 0") }
            var headers = objectHeaders(request)
            headers.append(("Content-MD5", md5(chunk[...])))
            let http = store.request(.PUT, key: request.key, headers: headers, body: chunk, sent: sent)
            _ = try await store.perform(http, expecting: [200], client: client, timeout: timeout)
            return Acknowledgement(offset: Int64(chunk.count))
        }
        guard offset % Int64(partSize) == 0 else { throw .status(409, "parts start at multiples of \(partSize) bytes; offset \(offset)") }
        let starts = Array(stride(from: 0, to: chunk.count, by: partSize))
        let progress = PartProgress(parts: starts.count)
        let store = self.store, client = self.client, timeout = self.timeout, partSize = self.partSize
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, start) in starts.enumerated() {
                    let part = Array(chunk[start..<min(start + partSize, chunk.count)])
                    let number = Int(offset / Int64(partSize)) + index + 1
                    group.addTask {
                        let http = store.request(
                            .PUT, key: request.key, query: "partNumber=\(number)&uploadId=\(SigV4.encode(id))",
                            headers: [("Content-MD5", md5(part[...]))], body: part
                        ) { count in
                            sent(progress.update(part: index, sent: count))
                        }
                        _ = try await store.perform(http, expecting: [200], client: client, timeout: timeout)
                    }
                }
                try await group.waitForAll()
            }
        } catch let failure as TransportFailure {
            throw failure
        } catch {
            throw .transport("\(error)")
        }
        return Acknowledgement(offset: offset + Int64(chunk.count))
    }

    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String {
        let url = store.url(for: request.key).absoluteString
        guard let id = uploadId(location) else { return url }
        let parts = try await listParts(id, key: request.key)
        let listed = parts.reduce(Int64(0)) { $0 + $1.size }
        guard listed == length else { throw .status(409, "S3 lists \(listed) bytes in parts for an upload of \(length)") }
        let xml = "<CompleteMultipartUpload>"
            + parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(XMLText.escape($0.etag))</ETag></Part>" }.joined()
            + "</CompleteMultipartUpload>"
        let http = store.request(.POST, key: request.key, query: "uploadId=\(SigV4.encode(id))", headers: [("Content-Type", "application/xml")], body: Array(xml.utf8))
        let (_, body) = try await store.perform(http, expecting: [200], client: client, timeout: timeout)
        // S3 may answer 200 and then report an error in the body.
        if body.contains("<Error>") { throw .status(500, "CompleteMultipartUpload: \(XMLText.first("Code", in: body) ?? "") \(XMLText.first("Message", in: body) ?? "")") }
        return url
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {
        guard let id = uploadId(location) else { return }
        let http = store.request(.DELETE, key: request.key, query: "uploadId=\(SigV4.encode(id))")
        do {
            _ = try await store.perform(http, expecting: [204, 200], client: client, timeout: timeout)
        } catch .status(404, _) {
            return  // already gone
        }
    }

    private func uploadId(_ location: String) -> String? {
        location.hasPrefix(Self.multipartPrefix) ? String(location.dropFirst(Self.multipartPrefix.count)) : nil
    }

    /// The parts S3 holds for an upload, by part number (all pages of ListParts).
    private func listParts(_ id: String, key: String) async throws(TransportFailure) -> [(number: Int, size: Int64, etag: String)] {
        var parts: [(number: Int, size: Int64, etag: String)] = []
        var marker = 0
        while true {
            let http = store.request(.GET, key: key, query: "part-number-marker=\(marker)&uploadId=\(SigV4.encode(id))")
            let (_, body) = try await store.perform(http, expecting: [200], client: client, timeout: timeout)
            for part in XMLText.all("Part", in: body) {
                guard let number = XMLText.first("PartNumber", in: part).flatMap(Int.init),
                    let size = XMLText.first("Size", in: part).flatMap(Int64.init), let etag = XMLText.first("ETag", in: part)
                else { continue }
                parts.append((number, size, etag))
            }
            guard XMLText.first("IsTruncated", in: body) == "true", let next = XMLText.first("NextPartNumberMarker", in: body).flatMap(Int.init), next > marker
            else { break }
            marker = next
        }
        return parts.sorted { $0.number < $1.number }
    }

    private func objectHeaders(_ request: UploadRequest) -> [(String, String)] {
        [("Content-Type", request.contentType)] + request.metadata.sorted { $0.key < $1.key }.map { ("x-amz-meta-\($0.key.lowercased())", $0.value) }
    }
}

/// A presigned PUT URL (generated by whoever holds the keys): one streamed PUT, no signing here.
struct PresignedPUT: UploadTransport {
    let url: URL
    let client: HTTPClient
    let timeout: Duration

    var acceptsDataOnCreate: Bool { false }
    func chunkSize(forLength length: Int64) -> Int? { Int(max(1, length)) }
    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created {
        Created(location: S3Transport.singlePut)
    }
    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Acknowledgement { Acknowledgement(offset: 0) }

    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Acknowledgement {
        var http = HTTPClientRequest(url: url.absoluteString)
        http.method = .PUT
        http.headers.add(name: "Content-Type", value: request.contentType)
        http.headers.add(name: "Content-MD5", value: md5(chunk[...]))
        http.body = .counting(chunk, sent: sent)
        _ = try await S3Store.perform(http, expecting: [200], client: client, timeout: timeout)
        return Acknowledgement(offset: Int64(chunk.count))
    }

    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.query = nil
        return components.url!.absoluteString
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {}
}

/// Bytes sent of each part of a chunk, added up for progress.
final class PartProgress: Sendable {
    private let sent: Mutex<[Int]>

    init(parts: Int) { sent = Mutex([Int](repeating: 0, count: parts)) }

    /// Records a part's bytes sent; returns the chunk's total.
    func update(part: Int, sent count: Int) -> Int {
        sent.withLock { $0[part] = count; return $0.reduce(0, +) }
    }
}

/// `Content-MD5`: the base64 MD5 of the body.
func md5(_ bytes: ArraySlice<UInt8>) -> String {
    Data(Insecure.MD5.hash(data: bytes)).base64EncodedString()
}
