import Foundation

/// What the API says of a photo still on its way: the newest unfinished upload that matches, with the
/// bytes the server acknowledged.
struct UploadsInProgress: Sendable {
    let store: any PartialUploadStore

    func photo(where matches: (TusUpload) -> Bool) async throws(UploadStoreFailure) -> PhotoBody? {
        guard let upload = try await store.unfinished().filter(matches).max(by: { $0.createdAt < $1.createdAt }) else { return nil }
        return PhotoBody(state: "uploading", error: nil, acknowledgedBytes: try await store.offset(upload.id), totalBytes: upload.length)
    }
}
