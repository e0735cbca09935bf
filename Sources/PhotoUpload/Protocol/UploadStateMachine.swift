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
/// **What a server may claim.** The machine knows what it sent: an offset beyond the bytes handed to
/// requests so far is a lie (`protocolViolation`), never progress. An answer to a `send` that does not
/// move the offset forward counts against the retry budget like an error, and the bytes a server
/// accepted without keeping them are capped (`maxBytesWasted`, a few times the length), so a server
/// that never keeps what it gets ends the upload with a clear error instead of a loop. (Requests that
/// failed outright are bounded by the retry budget instead: re-sending after a dropped connection is
/// what a resumable upload is for.)
///
/// **Budgets.** The retry budget bounds the time without progress: it runs from the last byte the
/// server acknowledged (or the start), and `requestTimeout(now:)` keeps every request inside it. Until
/// the destination has answered once, the shorter `firstContactDuration` applies: a server that was
/// never reached (refused, no such host, TLS) fails fast as `unreachable`; once it has answered, a
/// dropped connection is likely transient and the long budget applies.
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
        /// The server answered 429 or 503 and said when to ask again (`Retry-After`).
        case retryLater(Int, String, after: Duration)
        /// No HTTP answer: connection refused or reset, timeout, DNS …
        case transportError(String)
        /// An answer the protocol does not allow (e.g. a `Location` on another origin): fail at once.
        case violation(String)
    }

    let length: Int64
    /// The first (and after a failure, the next) chunk's size.
    let chunkSize: Int
    let maxChunkSize: Int
    /// How long the upload may go without progress before it gives up.
    let maxRetryDuration: Duration
    /// How long to keep trying a destination that has not answered once.
    let firstContactDuration: Duration
    /// The longest a single request may take (shortened to what is left of the budget).
    let maxRequestDuration: Duration
    let backoff: Backoff
    /// The most bytes the server may accept without keeping them before the upload gives up.
    let maxBytesWasted: Int64
    /// Send the first chunk with `create` (tus creation-with-upload).
    let createWithData: Bool

    private(set) var location: String?
    /// Bytes the server acknowledged.
    private(set) var offset: Int64 = 0
    private var offsetKnown = false
    private var waiting: Duration?
    private var cancelling = false
    /// Failures since the last progress.
    private(set) var failures = 0
    /// Why the last request failed (what a retry reports).
    private(set) var lastFailure: String?
    /// When the current stretch without progress began.
    private var stallStart: Duration = .zero
    /// Whether the destination has ever answered (any HTTP status).
    private var answered = false
    /// The last error status the destination answered ("HTTP 503: …"), kept through failures of other
    /// kinds: giving up after a 503 and then a timeout names the 503 too.
    private var lastAnswer: String?
    /// The end of the furthest byte range handed to a request: the server cannot hold more.
    private(set) var sentUpTo: Int64
    /// Bytes sent in requests the server answered with success, but did not keep.
    private var bytesWasted: Int64 = 0
    /// The bytes the last action sent (its answer must move past their start), nil when it sent nothing.
    private var sending: Range<Int64>?
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

    /// `resuming`: the location of an upload an earlier run began, and `sentBefore`, the most bytes that
    /// run can have delivered (the journal's bound; nil: unknown, any offset up to `length` is believed).
    init(
        length: Int64, chunkSize: Int, maxChunkSize: Int? = nil, maxRetryDuration: Duration,
        firstContactDuration: Duration? = nil, maxRequestDuration: Duration = .seconds(30), backoff: Backoff,
        createWithData: Bool = false, resuming location: String? = nil, sentBefore: Int64? = nil
    ) {
        self.length = length
        self.chunkSize = max(1, chunkSize)
        self.maxChunkSize = max(self.chunkSize, maxChunkSize ?? chunkSize)
        self.maxRetryDuration = maxRetryDuration
        self.firstContactDuration = min(firstContactDuration ?? maxRetryDuration, maxRetryDuration)
        self.maxRequestDuration = maxRequestDuration
        self.backoff = backoff
        self.createWithData = createWithData
        self.location = location
        maxBytesWasted = 3 * length + Int64(self.chunkSize)
        sentUpTo = location == nil ? 0 : min(length, sentBefore ?? length)
        currentChunkSize = self.chunkSize
    }

    /// How long the next request may take at `now`: what is left of the current budget, at most
    /// `maxRequestDuration`, at least a second (so that a budget of zero still lets a request answer).
    func requestTimeout(now: Duration) -> Duration {
        let left = stallStart + budget - now
        return max(.seconds(1), min(maxRequestDuration, left))
    }

    /// The budget in force: the short one until the destination has answered once.
    private var budget: Duration { answered ? maxRetryDuration : firstContactDuration }

    /// The most bytes the destination can hold after this upload's requests so far (what the journal
    /// keeps for a later run's `sentBefore`): what was sent, plus the next chunk, which may be under way
    /// when the process dies.
    var mayHaveDelivered: Int64 { min(length, max(sentUpTo, offset + Int64(currentChunkSize))) }

    /// The next thing to do; `now` is the time since the upload started.
    mutating func next(now: Duration = .zero) -> Action {
        let action = nextAction()
        sending = switch action {
        case .send(_, let offset, let count): offset..<(offset + Int64(count))
        case .create(_, let first) where first > 0: 0..<Int64(first)
        default: nil
        }
        sendStarted = sending == nil ? nil : now
        if let sending { sentUpTo = max(sentUpTo, sending.upperBound) }
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

    /// Continuing after a pause: the budgets start again at `now`.
    mutating func resumed(now: Duration) {
        stallStart = now
        failures = 0
    }

    /// Records what happened; `now` is the time since the upload started (for the retry budget).
    mutating func record(_ outcome: Outcome, now: Duration, jitter: Double) {
        switch outcome {
        case .created(let url, let acknowledged):
            answered = true
            location = url
            offset = 0
            offsetKnown = createdWith == 0
            succeeded(now: now)
            if let acknowledged {
                record(.offset(acknowledged), now: now, jitter: jitter)
            } else {
                sending = nil
            }
        case .offset(let value):
            answered = true
            guard (0...length).contains(value) else {
                terminal = .fail(UploadError(.protocolViolation, "the server reports offset \(value) for an upload of \(length) bytes"))
                return
            }
            guard value <= sentUpTo else {
                terminal = .fail(UploadError(.protocolViolation,
                    "the server reports offset \(value) but only \(sentUpTo) of \(length) bytes were sent: it claims bytes it never received"))
                return
            }
            // Only progress clears the failure count: a server that answers HEAD but refuses every
            // PATCH must still run out of retry budget.
            let progressed = value > offset
            if progressed, let started = sendStarted {
                resize(sent: value - offset, in: now - started)
            }
            let sent = sending
            sending = nil
            offset = value
            offsetKnown = true
            if let sent {
                bytesWasted += Int64(sent.count) - max(0, min(value, sent.upperBound) - sent.lowerBound)
                if bytesWasted > maxBytesWasted {
                    terminal = .fail(UploadError(.protocolViolation,
                        "gave up: the server accepted \(bytesWasted) bytes of an upload of \(length) without keeping them (offset \(value))"))
                    return
                }
            }
            if progressed {
                requeries = 0
                succeeded(now: now)
            } else if let sent, value <= sent.lowerBound {
                // Data went out and the server kept none of it (or went back): no progress is a failure.
                transient("the server kept none of the \(sent.count) bytes sent at offset \(sent.lowerBound) (it answers offset \(value))", now: now, jitter: jitter)
            }
        case .terminated:
            terminal = .cancelled
        case .completed(let url):
            answered = true
            completedURL = url
            succeeded(now: now)
        case .violation(let message):
            terminal = .fail(UploadError(.protocolViolation, message))
        case .status(let code, let message):
            answered = true
            sending = nil
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
                lastAnswer = "HTTP \(code): \(message)"
                transient("HTTP \(code): \(message)", now: now, jitter: jitter)
            default:
                terminal = .fail(UploadError(.rejected, message, status: code))
            }
        case .retryLater(let code, let message, let after):
            // As any 429 or 503, but not before the server said: the wait is the longer of its and the backoff's.
            answered = true
            sending = nil
            if cancelling {
                terminal = .cancelled
                return
            }
            lastAnswer = "HTTP \(code): \(message)"
            transient("HTTP \(code): \(message)", now: now, jitter: jitter, atLeast: after)
        case .transportError(let message):
            sending = nil
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

    private mutating func succeeded(now: Duration) {
        failures = 0
        lastFailure = nil
        lastAnswer = nil
        stallStart = now
    }

    private mutating func transient(_ message: String, now: Duration, jitter: Double, atLeast: Duration = .zero) {
        failures += 1
        lastFailure = message
        offsetKnown = false  // servers may keep part of a chunk: always ask
        currentChunkSize = chunkSize
        let stalled = now - stallStart
        let delay = max(backoff.delay(attempt: failures, jitter: jitter), atLeast)
        // Give up when the budget is spent, or would be before the next attempt could start.
        if stalled + delay >= budget {
            let tried = "\(failures) attempt\(failures == 1 ? "" : "s") over \(String(format: "%.1f", stalled.seconds)) s"
            let answer = lastAnswer.map { $0 == message ? "" : "; the server last answered \($0)" } ?? ""
            terminal = answered
                ? .fail(UploadError(.retriesExhausted, "gave up after \(tried) without progress: \(message)\(answer)"))
                : .fail(UploadError(.unreachable, "the destination never answered (\(tried)): \(message)"))
            return
        }
        waiting = delay
    }
}
