/// The resumable upload protocol (tus 1.0 core + creation + termination semantics) as a pure state
/// machine: it says what to do next, the owner does it and reports what happened. No I/O, no
/// clock and no randomness of its own, so tests drive it with tables.
///
/// | state | next action |
/// |---|---|
/// | no upload yet | `create` |
/// | upload URL, offset unknown (resumed, or after any error) | `query` (HEAD) |
/// | offset < length | `send` the next chunk at the offset (PATCH) |
/// | offset == length | `finish` |
/// | cancel requested | `terminate` (DELETE) when an upload exists, else `cancelled` |
/// | transient failure | `wait` (backoff), then `query` |
struct UploadStateMachine {
    enum Action: Equatable {
        case create(length: Int64)
        case query(location: String)
        case send(location: String, offset: Int64, length: Int)
        case wait(Duration)
        case terminate(location: String)
        case finish(location: String)
        case fail(UploadError)
        case cancelled
    }

    /// What the owner observed after performing an action.
    enum Outcome: Equatable {
        /// `create` answered 201 with this location (and an offset when data went with it).
        case created(location: String)
        /// `query` or `send` answered with the server's offset.
        case offset(Int64)
        /// `terminate` done (or the upload was already gone).
        case terminated
        /// The server answered with an error status.
        case status(Int, String)
        /// No HTTP answer: connection refused or reset, timeout, DNS …
        case transportError(String)
    }

    let length: Int64
    let chunkSize: Int
    let maxRetryDuration: Duration
    let backoff: Backoff

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

    init(length: Int64, chunkSize: Int, maxRetryDuration: Duration, backoff: Backoff, resuming location: String? = nil) {
        self.length = length
        self.chunkSize = max(1, chunkSize)
        self.maxRetryDuration = maxRetryDuration
        self.backoff = backoff
        self.location = location
    }

    /// The next thing to do.
    mutating func next() -> Action {
        if let terminal { return terminal }
        if cancelling {
            guard let location else { return .cancelled }
            return .terminate(location: location)
        }
        if let delay = waiting {
            waiting = nil
            return .wait(delay)
        }
        guard let location else { return .create(length: length) }
        guard offsetKnown else { return .query(location: location) }
        if offset == length { return .finish(location: location) }
        return .send(location: location, offset: offset, length: Int(min(Int64(chunkSize), length - offset)))
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
        case .created(let url):
            location = url
            offset = 0
            offsetKnown = true
            succeeded()
        case .offset(let value):
            guard (0...length).contains(value) else {
                terminal = .fail(UploadError(.protocolViolation, "the server reports offset \(value) for an upload of \(length) bytes"))
                return
            }
            // Only progress clears the failure count: a server that answers HEAD but refuses every
            // PATCH must still run out of retry budget.
            let progressed = value > offset
            offset = value
            offsetKnown = true
            if progressed {
                requeries = 0
                succeeded()
            }
        case .terminated:
            terminal = .cancelled
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

    private mutating func succeeded() {
        failures = 0
        firstFailure = nil
    }

    private mutating func transient(_ message: String, now: Duration, jitter: Double) {
        failures += 1
        let first = firstFailure ?? now
        firstFailure = first
        offsetKnown = false  // servers may keep part of a chunk: always ask
        if now - first >= maxRetryDuration {
            terminal = .fail(UploadError(.retriesExhausted, "gave up after \(failures) attempts over \(now - first): \(message)"))
            return
        }
        waiting = backoff.delay(attempt: failures, jitter: jitter)
    }
}
