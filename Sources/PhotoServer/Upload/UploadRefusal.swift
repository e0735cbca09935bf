import HTTPTypes

/// Why an upload call was refused, in no protocol's terms: one of the named refusals below, each with its status and
/// the refusals metric's label spelled once (`Rule`). Each dialect answers it with the status, the message and its
/// own headers, and counts it (`photoprep_rule_refusals_total{reason}`) as it answers.
struct UploadRefusal: Error, CustomStringConvertible {
    /// The refusals, each with its status and metric label.
    enum Rule: CaseIterable {
        /// A header missing or malformed, a body that does not say what it claims (400).
        case malformed
        /// The protocol version the request needs to name (412, tus' `Tus-Resumable`).
        case versionRequired
        /// A body of another content type than the protocol's (415).
        case wrongBodyType
        /// No valid token (401).
        case notAuthenticated
        /// The caller may not write the upload's path (403).
        case notAllowed
        /// The upload, or a body, is larger than the path or the upload allows (413).
        case tooLarge
        /// The photo does not fit in its owner's storage quota (413).
        case overQuota
        /// The first bytes are not a photo the pipeline decodes (415).
        case notAPhoto
        /// The focal point in the metadata is not one (422).
        case badFocus
        /// The caller has as many unfinished uploads as allowed (429).
        case tooManyUnfinished
        /// The app's backend refused the upload (`CreationHook`): its status (4xx) and message.
        case refusedByHook
        /// The app's backend could not be asked, and a failed hook refuses (503).
        case hookFailed
        /// Unknown, expired or someone else's upload: all look alike (404).
        case noSuchUpload
        /// The offset the request claims is not what the server holds (409).
        case offsetMismatch
        /// Another request or instance is writing to or finishing the upload (423).
        case busyUpload
        /// Bytes the server acknowledged are gone: a new upload is needed (410).
        case gone
        /// The body arrived slower than the server allows (408).
        case tooSlow
        /// The body's checksum is not the one the request sent (460, tus' checksum extension).
        case checksumMismatch
        /// The photos being prepared and waiting fill the pipeline (503).
        case pipelineFull
        /// The photo cannot be prepared (422).
        case notPreparable
        /// The database or the storage failed, or did not answer (503).
        case unavailable
        /// The storage is full (507).
        case storageFull

        var status: HTTPResponse.Status {
            switch self {
            case .malformed: .badRequest
            case .versionRequired: .preconditionFailed
            case .wrongBodyType, .notAPhoto: .unsupportedMediaType
            case .notAuthenticated: .unauthorized
            case .notAllowed, .refusedByHook: .forbidden
            case .tooLarge, .overQuota: .contentTooLarge
            case .badFocus, .notPreparable: .unprocessableContent
            case .tooManyUnfinished: .tooManyRequests
            case .noSuchUpload: .notFound
            case .offsetMismatch: .conflict
            case .busyUpload: HTTPResponse.Status(code: 423, reasonPhrase: "Locked")
            case .gone: .gone
            case .tooSlow: .requestTimeout
            case .checksumMismatch: Tus.checksumMismatch
            case .pipelineFull, .unavailable, .hookFailed: .serviceUnavailable
            case .storageFull: DependencyFailure.insufficientStorage
            }
        }

        /// The refusals metric's label.
        var reason: String {
            switch self {
            case .malformed, .versionRequired, .wrongBodyType: "protocol"
            case .notAuthenticated: "auth"
            case .notAllowed: "path"
            case .tooLarge: "size"
            case .notAPhoto: "type"
            case .badFocus: "focus"
            case .tooManyUnfinished: "quota"
            case .overQuota: "storage-quota"
            case .refusedByHook, .hookFailed: "hook"
            case .noSuchUpload: "unknown"
            case .offsetMismatch: "offset"
            case .busyUpload: "locked"
            case .gone: "gone"
            case .tooSlow: "slow"
            case .checksumMismatch: "checksum"
            case .pipelineFull: "busy"
            case .notPreparable: "photo"
            case .unavailable, .storageFull: "storage"
            }
        }
    }

    var rule: Rule
    var description: String
    /// What the server holds, when the claimed offset was not it (409) or the upload is complete (413).
    var held: Int64?
    /// Another status than the rule's: the one the app's backend refused with (`refusedByHook`).
    var answer: HTTPResponse.Status?

    init(_ rule: Rule, _ description: String, held: Int64? = nil, answer: HTTPResponse.Status? = nil) {
        self.rule = rule
        self.description = description
        self.held = held
        self.answer = answer
    }

    var status: HTTPResponse.Status { answer ?? rule.status }
    var reason: String { rule.reason }
    /// When asking again may succeed (429, 503, 507), in seconds.
    var retryAfter: Int? { Problem.retryAfter(status) }

    static let noSuchUpload = UploadRefusal(.noSuchUpload, "no such upload")
    static let gone = UploadRefusal(.gone, "bytes of this upload are no longer on the server: start a new upload")

    /// A failure of the database or the storage, as every route refuses one: a message without the detail
    /// (`DependencyFailure.report` logs it).
    init(_ failure: DependencyFailure) {
        self.init(failure.condition == .full ? .storageFull : .unavailable, failure.description)
    }

    /// 413 for an `Upload-Length` of more digits than any upload's length has.
    static let lengthTooLong = UploadRefusal(.tooLarge, "Upload-Length is larger than any upload may be (10 MiB at most)")
}
