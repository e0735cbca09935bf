public import PhotoUpload

/// Where a service's photos end up: storage this process owns (a server, an embedded app), where a photo
/// is put whole, or an upload server the photos are sent to as its client (an app's services in front of
/// `photoprep serve`), resumably and with the bytes it acknowledged as progress.
public enum PhotoDestination: Sendable {
    case storage(any PhotoStorage)
    case uploadServer(Uploader)

    /// As configured: `file:///…`, `s3://…`, `https://…/files/`.
    public var name: String {
        switch self {
        case .storage(let storage): storage.destination
        case .uploadServer(let uploader): uploader.destination
        }
    }

    /// The storage, when this process owns it.
    public var storage: (any PhotoStorage)? {
        if case .storage(let storage) = self { storage } else { nil }
    }

    /// Deletes the object at `location`; `authorization` is the header an upload server is asked with.
    func delete(_ location: String, authorization: String?) async throws(ServiceError) {
        switch self {
        case .storage(let storage):
            try await storage.delete(location)
        case .uploadServer(let uploader):
            do { try await uploader.delete(location, authorization: authorization) } catch { throw .storage("deleting \(location): \(error)") }
        }
    }
}
