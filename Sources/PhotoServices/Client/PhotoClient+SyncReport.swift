extension PhotoClient {
    /// What `sync()` did.
    public struct SyncReport: Sendable {
        /// The creations sent, as they stand afterwards (created, refused, or still pending).
        public var groups: [PendingGroup]
        /// The photo jobs run, as they stand afterwards.
        public var photos: [PhotoJob]
    }
}
