public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Plain object calls on a bucket — put, get, delete, list under a prefix — for a server that keeps its
/// own state there (`photoprep serve` keeps the pieces of partial uploads in the bucket, so that any
/// instance can continue them). Keys are relative to the store's prefix, like `UploadRequest.key`.
public struct S3Objects: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// The bucket's HTTP status, when it answered.
        public var status: Int?

        /// The bucket says it has no room (507: MinIO's `XMinioStorageFull`, any S3-compatible store's
        /// Insufficient Storage).
        public var isFull: Bool { status == 507 }

        init(_ action: String, _ error: TransportFailure) {
            description = "\(action): \(error)"
            switch error {
            case .status(let code, _), .retryLater(let code, _, _): status = code
            case .transport, .violation, .cancelled: status = nil
            }
        }
    }

    public let store: S3Store
    let client: HTTPClient
    let timeout: Duration

    public init(store: S3Store, client: HTTPClient = .shared, timeout: Duration = .seconds(60)) {
        self.store = store
        self.client = client
        self.timeout = timeout
    }

    /// Stores `bytes` under `key` (a signed PUT with `Content-MD5`: S3 refuses a body damaged on the way),
    /// served later with `contentType` when given.
    public func put(_ key: String, _ bytes: [UInt8], contentType: String? = nil) async throws(Failure) {
        let type = contentType.map { [("Content-Type", $0)] } ?? []
        let request = store.request(.PUT, key: key, headers: [("Content-MD5", md5(bytes[...]))] + type, body: bytes)
        do { _ = try await store.perform(request, expecting: [200], client: client, timeout: timeout) } catch { throw Failure("PUT \(key)", error) }
    }

    /// The object's bytes, or nil when there is none.
    public func get(_ key: String) async throws(Failure) -> [UInt8]? {
        do { return try await store.download(key, client: client, timeout: timeout) } catch { throw Failure("GET \(key)", error) }
    }

    /// Deletes the object (nothing to delete is not an error).
    public func delete(_ key: String) async throws(Failure) {
        let request = store.request(.DELETE, key: key)
        do { _ = try await store.perform(request, expecting: [200, 204, 404], client: client, timeout: timeout) } catch { throw Failure("DELETE \(key)", error) }
    }

    /// Whether the bucket answers, and answers this store's credentials: one ListObjectsV2 of at most one
    /// key, given `timeout` (a readiness probe, not a transfer).
    public func probe(timeout: Duration) async throws(Failure) {
        let request = store.request(.GET, url: store.bucketURL(query: "list-type=2&max-keys=1"))
        do { _ = try await store.perform(request, expecting: [200], client: client, timeout: timeout) } catch { throw Failure("list", error) }
    }

    /// The keys under `prefix` (ListObjectsV2, every page), relative to the store's prefix.
    public func list(prefix: String) async throws(Failure) -> [String] {
        var keys: [String] = []
        var token: String?
        let storePrefix = store.prefix.isEmpty ? "" : store.prefix + "/"
        repeat {
            // Query parameters in SigV4's canonical (sorted) order.
            var query = token.map { "continuation-token=\(SigV4.encode($0))&" } ?? ""
            query += "list-type=2&prefix=\(SigV4.encode(storePrefix + prefix))"
            let request = store.request(.GET, url: store.bucketURL(query: query))
            let body: String
            do { body = try await store.perform(request, expecting: [200], client: client, timeout: timeout).1 } catch { throw Failure("list \(prefix)", error) }
            keys += XMLText.all("Key", in: body).map { String($0.dropFirst(storePrefix.count)) }
            token = XMLText.first("IsTruncated", in: body) == "true" ? XMLText.first("NextContinuationToken", in: body) : nil
        } while token != nil
        return keys
    }
}
