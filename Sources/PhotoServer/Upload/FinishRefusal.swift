/// Why an upload's photo was not stored when its last byte arrived (`ArrivalProcessor`): what the store does with
/// the bytes (`keepsBytes`), and what the upload core answers.
struct FinishRefusal: Error, CustomStringConvertible {
    enum Kind: String {
        /// Not a photo we can decode, or not one that fits its path once prepared: nothing is stored (422).
        case unprocessable
        /// The caller may no longer write there (e.g. no longer a group admin): nothing is stored (403).
        case notAllowed
        /// The photo does not fit in its owner's storage quota: nothing is stored (413).
        case overQuota
        /// Storage, the database or the pipeline's pool failed: the bytes are kept and the client may ask again (503).
        case unavailable
        /// The storage has no room: the bytes are kept and the client may ask again later (507).
        case full
        /// As many photos as may wait are waiting for the pipeline: the bytes are kept; ask again (503).
        case busy
        /// Bytes the server acknowledged are no longer in its store: the upload ends, to be started again (410).
        case gone
    }

    var kind: Kind
    var description: String

    /// The upload's bytes are kept for the client to ask again (503), not deleted with it.
    var keepsBytes: Bool { kind == .unavailable || kind == .full || kind == .busy }
}
