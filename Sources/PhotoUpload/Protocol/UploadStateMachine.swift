import Foundation

/// The resumable upload protocol (tus 1.0 core + creation + termination semantics) as a pure state
/// machine: it says what to do next, the owner does it and reports what happened. No I/O, no
/// clock and no randomness of its own, so tests drive it with tables.
///
/// | state | next action |
/// |---|---|
/// | no upload yet | `create` (carrying the first chunk when the server accepts data on creation) |
/// | upload URL, offset unknown (resumed, or after any error) | `query` (HEAD) |
/// | offset < length | `send` the next chunk at the offset (PATCH) |
/// | offset == length | `complete` (S3: CompleteMultipartUpload; tus and local: nothing to send), then `finish` |
/// | cancel requested | `terminate` (DELETE) when an upload exists, else `cancelled` |
/// | transient failure | `wait` (backoff), then `query` |
///
/// Chunks start at `chunkSize`. After each acknowledged chunk the next one is sized to take about
/// `targetChunkDuration` at the rate just measured, between `chunkSize` and `maxChunkSize` (doubling
/// when no time was measured); after any failure they fall back to `chunkSize`, as Firebase Storage's
/// Android uploader does. A slow link still sees acknowledged progress about every second, a fast one
/// is not slowed by a round trip per 256 KiB.
struct UploadStateMachine {
    enum Action: Equatable {
        /// Create the upload; `firstChunk` > 0: send that many bytes with the request (creation-with-upload).
        case create(length: Int64, firstChunk: Int = 0)
        case query(location: String)
        case send(location: String, offset: Int64, length: Int)
        case wait(Duration)
        case terminate(location: String)
        /// Every byte is acknowledged: make the object (S3 multipart) and learn its URL.
        case complete(location: String)
        /// Done: the object's URL.
        case finish(location: String)
        case fail(UploadError)
        case cancelled
    }

    /// What the owner observed after performing an action.
    enum Outcome: Equatable {
        /// `create` answered 201 with this location, and the offset when data went with it
        /// (nil: the server did not say how much it kept).
        case created(location: String, offset: Int64? = nil)
        /// `query` or `send` answered with the server's offset.
        case offset(Int64)
        /// `terminate` done (or the upload was already gone).
        case terminated
        /// `complete` done: the object's URL.
        case completed(url: String)
        /// The server answered with an error status.
        case status(Int, String)
        /// No HTTP answer: connection refused or reset, timeout, DNS …
        case transportError(String)
    }

    let length: Int64
    /// The first (and after a failure, the next) chunk's size.
    let chunkSize: Int
    let maxChunkSize: Int
    let maxRetryDuration: Duration
    let backoff: Backoff
    /// Send the first chunk with `create` (tus creation-with-upload).
    let createWithData: Bool

    private(set) var location: String?
    /// Bytes the server acknowledged.
    private(set) var offset: Int64 = 0
    private var offsetKnown = false
    private var waiting: Duration?
    private var cancelling = false
    private var failures = 0
    private var firstFailure: Duration?
    /// Consecutive answers that asked us to re-query (409, 460) without progress.
    private var requeries = 0
    private var terminal: Action?
    /// The size of the next chunk.
    private(set) var currentChunkSize: Int
    /// The object's URL once `complete` succeeded.
    private var completedURL: String?
    /// Bytes that went with the last `create`.
    private var createdWith = 0
    /// When the last action that sent data started (its acknowledgement sizes the next chunk); nil
    /// when the last action sent none.
    private var sendStarted: Duration?
    /// How long a chunk should take at the measured rate.
    static let targetChunkDuration: Duration = .seconds(1)

    init(
        length: Int64, chunkSize: Int, maxChunkSize: Int? = nil, maxRetryDuration: Duration, backoff: Backoff,
        createWithData: Bool = false, resuming location: String? = nil
    ) {
        self.length = length
        self.chunkSize = max(1, chunkSize)
        self.maxChunkSize = max(self.chunkSize, maxChunkSize ?? chunkSize)
        self.maxRetryDuration = maxRetryDuration
        self.backoff = backoff
        self.createWithData = createWithData
        self.location = location
        currentChunkSize = self.chunkSize
    }

    /// The next thing to do; `now` is the time since the upload started.
    mutating func next(now: Duration = .zero) -> Action {
        let action = nextAction()
        switch action {
        case .send: sendStarted = now
        case .create(_, let first): sendStarted = first > 0 ? now : nil
        default: sendStarted = nil
        }
        return action
    }

    private mutating func nextAction() -> Action {
        if let terminal { return terminal }
        if cancelling {
            guard let location else { return .cancelled }
            return .terminate(location: location)
        }
        if let delay = waiting {
            waiting = nil
            return .wait(delay)
        }
        guard let location else {
            createdWith = createWithData ? Int(min(Int64(currentChunkSize), length)) : 0
            return .create(length: length, firstChunk: createdWith)
        }
        guard offsetKnown else { return .query(location: location) }
        if offset == length { return completedURL.map { .finish(location: $0) } ?? .complete(location: location) }
        return .send(location: location, offset: offset, length: Int(min(Int64(currentChunkSize), length - offset)))
    }

    /// Asks to cancel: the next action deletes the upload on the server.
    mutating func cancel() {
        if terminal == nil { cancelling = true }
    }

    /// Forget the acknowledged offset (after a pause or an interrupted request): query it again.
    mutating func requery() { offsetKnown = false }

    /// Records what happened; `now` is the time since the upload started (for the retry budget).
    mutating func record(_ outcome: Outcome, now: Duration, jitter: Double) {
        switch outcome {
        case .created(let url, let acknowledged):
            location = url
            offset = 0
            offsetKnown = createdWith == 0
            succeeded()
            if let acknowledged { record(.offset(acknowledged), now: now, jitter: jitter) }
        case .offset(let value):
            guard (0...length).contains(value) else {
                terminal = .fail(UploadError(.protocolViolation, "the server reports offset \(value) for an upload of \(length) bytes"))
                return
            }
            // Only progress clears the failure count: a server that answers HEAD but refuses every
            // PATCH must still run out of retry budget.
            let progressed = value > offset
            if progressed, let started = sendStarted {
                resize(sent: value - offset, in: now - started)
            }
            offset = value
            offsetKnown = true
            if progressed {
                requeries = 0
                succeeded()
            }
        case .terminated:
            terminal = .cancelled
        case .completed(let url):
            completedURL = url
            succeeded()
        case .status(let code, let message):
            if cancelling {
                terminal = .cancelled  // the upload is gone or cannot be deleted: either way we stop
                return
            }
            switch code {
            case 401, 403:
                terminal = .fail(UploadError(.notAuthorized, message, status: code))
            case 413:
                terminal = .fail(UploadError(.tooLarge, message, status: code))
            case 404, 410:
                // Expired or vanished: start again from zero.
                location = nil
                offset = 0
                offsetKnown = false
            case 409, 460:
                // Offset mismatch or checksum mismatch: ask where the server is and resend from there.
                requeries += 1
                offsetKnown = false
                currentChunkSize = chunkSize
                if requeries > 5 {
                    terminal = .fail(UploadError(.protocolViolation, "the server keeps refusing the chunk (\(code)): \(message)", status: code))
                }
            case 423, 429, 500...599:
                transient("HTTP \(code): \(message)", now: now, jitter: jitter)
            default:
                terminal = .fail(UploadError(.rejected, message, status: code))
            }
        case .transportError(let message):
            if cancelling {
                terminal = .cancelled
                return
            }
            transient(message, now: now, jitter: jitter)
        }
    }

    /// Sizes the next chunk from the rate of the last one.
    private mutating func resize(sent bytes: Int64, in elapsed: Duration) {
        let next: Double
        if elapsed > .zero {
            next = Double(bytes) / elapsed.seconds * Self.targetChunkDuration.seconds
        } else {
            next = Double(currentChunkSize) * 2
        }
        currentChunkSize = Int(min(Double(maxChunkSize), max(Double(chunkSize), next)))
    }

    private mutating func succeeded() {
        failures = 0
        firstFailure = nil
    }

    private mutating func transient(_ message: String, now: Duration, jitter: Double) {
        failures += 1
        let first = firstFailure ?? now
        firstFailure = first
        offsetKnown = false  // servers may keep part of a chunk: always ask
        currentChunkSize = chunkSize
        if now - first >= maxRetryDuration {
            terminal = .fail(UploadError(.retriesExhausted, "gave up after \(failures) attempts over \(String(format: "%.1f", (now - first).seconds)) s: \(message)"))
            return
        }
        waiting = backoff.delay(attempt: failures, jitter: jitter)
    }
}
