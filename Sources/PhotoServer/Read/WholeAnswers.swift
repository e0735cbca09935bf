import Foundation
import HTTPTypes
import PhotoServices
import Synchronization

/// The headers of the plain answer — 200, the whole photo, no conditional or range header asked — by the
/// photo's version and its `Cache-Control`: the same photo (its content, its time, its size) always gets the
/// same ones, and making `HTTPFields` was a tenth of a thumbnail's answer from memory. Only photos in the
/// local store have such an answer (one in S3 is a redirect to a URL that expires). Emptied when full.
final class WholeAnswers: Sendable {
    private struct Name: Hashable {
        var sha256: String
        var storedAt: Date
        var size: Int64
        var cacheControl: String
    }
    private let known = Mutex<[Name: HTTPFields]>([:])

    func headers(_ photo: StoredPhoto, cacheControl: String) -> HTTPFields? {
        known.withLock { $0[Name(sha256: photo.sha256, storedAt: photo.storedAt, size: photo.size, cacheControl: cacheControl)] }
    }

    func keep(_ headers: HTTPFields, for photo: StoredPhoto, cacheControl: String) {
        known.withLock { known in
            if known.count >= 10_000 { known.removeAll(keepingCapacity: true) }
            known[Name(sha256: photo.sha256, storedAt: photo.storedAt, size: photo.size, cacheControl: cacheControl)] = headers
        }
    }
}
