import Foundation
public import PhotoUpload

/// Photos in an S3-compatible bucket (`s3://bucket/prefix`), on PhotoUpload's S3 client: one signed `PUT`
/// an object (S3 makes it visible whole), reads as presigned `GET`s the bucket serves itself.
public struct BucketStorage: PhotoStorage {
    public let objects: S3Objects
    public let destination: String

    /// `timeout`: the longest one request may take (a bucket that does not answer — refused connections are
    /// tried again until then — fails a put with `.storage` after it, and the upload waiting for it gets 503).
    public init(url: String, environment: [String: String], timeout: Duration = .seconds(20)) throws(ServiceError) {
        do { objects = S3Objects(store: try S3Store(url: url, environment: environment), timeout: timeout) } catch { throw .invalidState("\(error)") }
        destination = url
    }

    public func location(of key: String) -> String {
        objects.store.url(for: key).absoluteString
    }

    public func put(_ bytes: [UInt8], key: String, contentType: String) async throws(ServiceError) -> StoredPhotos.StoredObject {
        do { try await objects.put(key, bytes, contentType: contentType) } catch {
            let detail = "\(key) could not be stored: \(error)"
            throw error.isFull ? .storageFull(detail) : .storage(detail)
        }
        return StoredPhotos.StoredObject(location: location(of: key), content: .init(of: bytes))
    }

    public func delete(_ location: String) async throws(ServiceError) {
        guard let key = objects.store.key(of: location) else {
            throw .invalidState("\(location) is not in s3://\(objects.store.bucket)/\(objects.store.prefix)")
        }
        do { try await objects.delete(key) } catch { throw .storage("deleting \(location): \(error)") }
    }

    public func bytes(key: String, location: String) async throws(ServiceError) -> [UInt8]? {
        do { return try await objects.get(key) } catch { throw .storage("reading \(key): \(error)") }
    }

    /// A presigned `GET` valid five minutes.
    public func read(key: String, location: String) -> StoredRead {
        .redirect(objects.store.presignedGET(key: key, expires: 300))
    }

    public func probe(timeout: Duration) async throws(StorageProblem) {
        do { try await objects.probe(timeout: timeout) } catch { throw StorageProblem(.unavailable, detail: "s3://\(objects.store.bucket): \(error)") }
    }

    public func list(prefix: String) async throws(ServiceError) -> [String] {
        do { return try await objects.list(prefix: prefix) } catch { throw .storage("\(error)") }
    }
}
