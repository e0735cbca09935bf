import Foundation

/// The stored photos' home: where a prepared photo and its thumbnails are put, where download URLs read
/// them from, and where replaced ones are deleted. Built once per process (`openPhotoStorage`) and handed
/// to everything that stores or reads photos: the intake, the photo jobs, the profile service, the media
/// routes, the sweeper. A folder (`FolderStorage`, the embedded default) or an S3 bucket (`BucketStorage`).
///
/// ```swift
/// let storage = try openPhotoStorage("s3://photos/prod")
/// let stored = try await storage.put(jpeg, key: "profile_images/u1/a.jpg")
/// ```
public protocol PhotoStorage: Sendable {
    /// Where it is, as given to `openPhotoStorage`: `file:///srv/storage` or `s3://bucket/prefix`.
    var destination: String { get }
    /// The location recorded for the object under `key`.
    func location(of key: String) -> String
    /// Stores `bytes` (of `contentType`, what a bucket serves them as) whole under `key`: a reader sees the previous
    /// object or this one, never part of one. Returns where it is and what readers are told of its bytes (their SHA-256
    /// and count).
    func put(_ bytes: [UInt8], key: String, contentType: String) async throws(ServiceError) -> StoredPhotos.StoredObject
    /// Deletes the object at `location` (one this storage gave); one already gone is not an error.
    func delete(_ location: String) async throws(ServiceError)
    /// How a reader gets the object under `key` that was recorded at `location`.
    func read(key: String, location: String) -> StoredRead
    /// The bytes of the object under `key` recorded at `location` (nil when there is none), for the server's own use.
    func bytes(key: String, location: String) async throws(ServiceError) -> [UInt8]?
    /// The keys stored under `prefix`, for sweeping.
    func list(prefix: String) async throws(ServiceError) -> [String]
    /// Whether a photo could be put now, asked cheaply for a readiness probe: the storage answers within
    /// `timeout`, takes writes and has room; otherwise throws what is wrong.
    func probe(timeout: Duration) async throws(StorageProblem)
}

extension PhotoStorage {
    /// Stores a JPEG under `key` (`put(_:key:contentType:)`).
    public func put(_ bytes: [UInt8], key: String) async throws(ServiceError) -> StoredPhotos.StoredObject {
        try await put(bytes, key: key, contentType: "image/jpeg")
    }
}

/// Opens the storage at `destination`: `s3://bucket/prefix` (its endpoint, region and credentials from
/// `environment`, nil: the process environment; see `S3Store`), or a folder as a `file://` URL or a path.
public func openPhotoStorage(_ destination: String, environment: [String: String]? = nil) throws(ServiceError) -> any PhotoStorage {
    if destination.hasPrefix("s3://") {
        return try BucketStorage(url: destination, environment: environment ?? ProcessInfo.processInfo.environment)
    }
    if destination.hasPrefix("file://") {
        guard let url = URL(string: destination), url.isFileURL else { throw .invalidState("\(destination): not a valid file URL") }
        return FolderStorage(root: url, destination: destination)
    }
    guard !destination.contains("://") else {
        throw .invalidState("\(destination): photos are stored in a folder (file:// or a path) or a bucket (s3://)")
    }
    return FolderStorage(root: URL(fileURLWithPath: destination), destination: destination)
}
