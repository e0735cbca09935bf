import Foundation
import Testing
@testable import PhotoUpload

@Suite struct UploadStateMachineTests {
    func machine(length: Int64 = 1000, chunk: Int = 400, budget: Duration = .seconds(10), resuming: String? = nil) -> UploadStateMachine {
        UploadStateMachine(length: length, chunkSize: chunk, maxRetryDuration: budget,
                           backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)), resuming: resuming)
    }

    @Test func happyPathCreatesThenSendsChunksThenFinishes() {
        var m = machine()
        #expect(m.next() == .create(length: 1000))
        m.record(.created(location: "u"), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 0, length: 400))
        m.record(.offset(400), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 400, length: 400))
        m.record(.offset(800), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 800, length: 200))
        m.record(.offset(1000), now: .zero, jitter: 1)
        #expect(m.next() == .complete(location: "u"))
        m.record(.completed(url: "https://cdn/u"), now: .zero, jitter: 1)
        #expect(m.next() == .finish(location: "https://cdn/u"))
    }

    @Test func aFailedCompletionIsRetriedAfterAskingTheOffset() {
        var m = machine(length: 400, resuming: "u")
        _ = m.next(); m.record(.offset(400), now: .zero, jitter: 1)
        #expect(m.next() == .complete(location: "u"))
        m.record(.status(503, "slow down"), now: .seconds(1), jitter: 1)
        #expect(m.next() == .wait(.milliseconds(100)))
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(400), now: .seconds(1), jitter: 1)
        #expect(m.next() == .complete(location: "u"))
    }

    @Test func resumingAsksForTheOffsetFirst() {
        var m = machine(resuming: "u")
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(640), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 640, length: 360))
    }

    @Test func transientFailureWaitsThenQueriesAndContinuesFromThePartialChunk() {
        var m = machine()
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        _ = m.next(); m.record(.transportError("connection reset"), now: .seconds(1), jitter: 1)
        #expect(m.next() == .wait(.milliseconds(100)))
        #expect(m.next() == .query(location: "u"))
        // The server kept part of the chunk: continue from its offset, not from a chunk boundary.
        m.record(.offset(131), now: .seconds(1), jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 131, length: 400))
    }

    @Test(arguments: [500, 502, 503, 423, 429])
    func serverErrorsAreRetriedWithGrowingBackoff(status: Int) {
        var m = machine()
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        var delays: [Duration] = []
        for attempt in 1...4 {
            _ = m.next()  // send or query
            m.record(.status(status, "busy"), now: .milliseconds(attempt), jitter: 1)
            if case .wait(let d) = m.next() { delays.append(d) }
        }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
    }

    @Test func aRetryAfterIsWaitedForButNeverLessThanTheBackoff() {
        var m = machine()
        #expect(m.next() == .create(length: 1000))
        m.record(.retryLater(429, "too many writes", after: .seconds(3)), now: .zero, jitter: 1)
        #expect(m.next() == .wait(.seconds(3)))
        #expect(m.next() == .create(length: 1000))
        m.record(.created(location: "u"), now: .seconds(3), jitter: 1)
        _ = m.next()
        // A Retry-After shorter than the backoff: the backoff's.
        m.record(.retryLater(503, "busy", after: .zero), now: .seconds(3), jitter: 1)
        #expect(m.next() == .wait(.milliseconds(100)))
        #expect(m.next() == .query(location: "u"))
        // One past the budget: a clear failure now rather than a wait that cannot end well.
        m.record(.retryLater(503, "busy", after: .seconds(60)), now: .seconds(4), jitter: 1)
        guard case .fail(let error) = m.next() else { Issue.record("expected a failure"); return }
        #expect(error.kind == .retriesExhausted)
        #expect(error.message.contains("HTTP 503: busy"))
    }

    @Test func retryAfterInSecondsOrAsADate() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(retryAfter("5") == .seconds(5))
        #expect(retryAfter(" 120 ") == .seconds(120))
        #expect(retryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now: now) == .seconds(30))
        #expect(retryAfter("Sun, 06 Nov 1994 08:49:00 GMT", now: now) == .zero, "a date past is now")
        #expect(retryAfter("99999") == .seconds(3600), "at most an hour")
        for bad in [nil, "", "-1", "soon", "1.5"] { #expect(retryAfter(bad) == nil, "\(bad ?? "nil")") }
    }

    @Test func retriesStopAfterTheBudgetWithAClearError() {
        var m = machine(budget: .seconds(5))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        _ = m.next(); m.record(.transportError("connection refused"), now: .seconds(1), jitter: 0)
        _ = m.next(); _ = m.next(); m.record(.transportError("connection refused"), now: .seconds(7), jitter: 0)
        guard case .fail(let error) = m.next() else { Issue.record("expected a failure"); return }
        #expect(error.kind == .retriesExhausted)
        #expect(error.message.contains("connection refused"))
    }

    /// A 503, then a timeout that spends the budget: the error names both, not only the last.
    @Test func givingUpNamesTheServersLastAnswerToo() {
        var m = machine(budget: .seconds(5))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        _ = m.next(); m.record(.status(503, "Slow Down"), now: .seconds(1), jitter: 0)
        _ = m.next(); _ = m.next(); m.record(.transportError("read timed out"), now: .seconds(7), jitter: 0)
        guard case .fail(let error) = m.next() else { Issue.record("expected a failure"); return }
        #expect(error.kind == .retriesExhausted)
        #expect(error.message.contains("read timed out") && error.message.contains("the server last answered HTTP 503: Slow Down"), "\(error.message)")
    }

    @Test(arguments: [(401, UploadError.Kind.notAuthorized), (403, .notAuthorized), (413, .tooLarge), (415, .rejected), (412, .rejected), (400, .rejected)])
    func clientErrorsFailAtOnce(status: Int, kind: UploadError.Kind) {
        var m = machine()
        _ = m.next()
        m.record(.status(status, "no"), now: .zero, jitter: 1)
        #expect(m.next() == .fail(UploadError(kind, "no", status: status)))
    }

    @Test func vanishedUploadStartsAgainFromZero() {
        var m = machine(resuming: "old")
        _ = m.next()
        m.record(.status(404, "gone"), now: .zero, jitter: 1)
        #expect(m.next() == .create(length: 1000))
    }

    @Test func checksumMismatchResendsFromTheServersOffset() {
        var m = machine()
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        _ = m.next(); m.record(.status(460, "checksum mismatch"), now: .zero, jitter: 1)
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(0), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 0, length: 400))
    }

    @Test func cancelDeletesTheUploadOnlyWhenOneExists() {
        var fresh = machine()
        fresh.cancel()
        #expect(fresh.next() == .cancelled)
        var started = machine()
        _ = started.next(); started.record(.created(location: "u"), now: .zero, jitter: 1)
        started.cancel()
        #expect(started.next() == .terminate(location: "u"))
        started.record(.terminated, now: .zero, jitter: 1)
        #expect(started.next() == .cancelled)
    }

    @Test func anOffsetPastTheLengthIsAProtocolViolation() {
        var m = machine(resuming: "u")
        _ = m.next()
        m.record(.offset(5000), now: .zero, jitter: 1)
        guard case .fail(let error) = m.next() else { Issue.record("expected a failure"); return }
        #expect(error.kind == .protocolViolation)
    }

    @Test func backoffTable() {
        let backoff = Backoff(initial: .milliseconds(200), maximum: .seconds(10))
        #expect(backoff.delay(attempt: 1, jitter: 1) == .milliseconds(200))
        #expect(backoff.delay(attempt: 3, jitter: 1) == .milliseconds(800))
        #expect(backoff.delay(attempt: 9, jitter: 1) == .seconds(10))
        #expect(backoff.delay(attempt: 2, jitter: 0) == .milliseconds(200))
    }
}

extension UploadStateMachineTests {
    @Test func answeredQueriesDoNotResetTheRetryBudget() {
        var m = machine(budget: .seconds(5))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        var now = Duration.zero
        var failed: UploadError?
        for _ in 0..<100 {
            switch m.next() {
            case .send: m.record(.status(503, "busy"), now: now, jitter: 1)
            case .query: m.record(.offset(0), now: now, jitter: 1)
            case .wait(let d): now += d
            case .fail(let error): failed = error
            default: break
            }
            if failed != nil { break }
        }
        #expect(failed?.kind == .retriesExhausted)
    }
}

extension UploadStateMachineTests {
    func growing(length: Int64 = 10_000, createWithData: Bool = false) -> UploadStateMachine {
        UploadStateMachine(length: length, chunkSize: 100, maxChunkSize: 800, maxRetryDuration: .seconds(10),
                           backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)), createWithData: createWithData)
    }

    @Test func chunksDoubleAfterEachAcknowledgementAndFallBackAfterAFailure() {
        var m = growing()
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        var sizes: [Int] = []
        var offset: Int64 = 0
        for _ in 0..<5 {
            guard case .send(_, let at, let length) = m.next() else { Issue.record("expected a send"); return }
            #expect(at == offset)
            sizes.append(length)
            offset += Int64(length)
            m.record(.offset(offset), now: .zero, jitter: 1)
        }
        #expect(sizes == [100, 200, 400, 800, 800])
        _ = m.next(); m.record(.transportError("reset"), now: .zero, jitter: 1)
        _ = m.next()  // wait
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(offset + 50), now: .zero, jitter: 1)  // the server kept part of the chunk
        #expect(m.next() == .send(location: "u", offset: offset + 50, length: 100), "a query's answer does not grow the chunk")
    }

    @Test func theNextChunkTakesAboutASecondAtTheMeasuredRate() {
        var m = growing(length: 100_000)
        _ = m.next(now: .zero); m.record(.created(location: "u"), now: .zero, jitter: 1)
        // 100 bytes in 0.5 s: 200 B/s, so the next chunk is 200 bytes.
        #expect(m.next(now: .seconds(1)) == .send(location: "u", offset: 0, length: 100))
        m.record(.offset(100), now: .milliseconds(1500), jitter: 1)
        #expect(m.next(now: .seconds(2)) == .send(location: "u", offset: 100, length: 200))
        // A fast link: straight to the largest chunk.
        m.record(.offset(300), now: .milliseconds(2001), jitter: 1)
        #expect(m.next(now: .seconds(3)) == .send(location: "u", offset: 300, length: 800))
        // A slow link: never below the first chunk size.
        m.record(.offset(1100), now: .seconds(30), jitter: 1)
        #expect(m.next(now: .seconds(30)) == .send(location: "u", offset: 1100, length: 100))
    }

    @Test func creationWithUploadCarriesTheFirstChunk() {
        var m = growing(length: 250, createWithData: true)
        #expect(m.next() == .create(length: 250, firstChunk: 100))
        m.record(.created(location: "u", offset: 100), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 100, length: 150))
        m.record(.offset(250), now: .zero, jitter: 1)
        #expect(m.next() == .complete(location: "u"))

        var small = growing(length: 60, createWithData: true)
        #expect(small.next() == .create(length: 60, firstChunk: 60))
        small.record(.created(location: "s", offset: 60), now: .zero, jitter: 1)
        #expect(small.next() == .complete(location: "s"), "a small photo takes one request")
    }

    @Test func creationWithUploadAsksTheOffsetWhenTheServerDidNotSay() {
        var m = growing(length: 250, createWithData: true)
        _ = m.next()
        m.record(.created(location: "u"), now: .zero, jitter: 1)
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(0), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 0, length: 100))
    }
}

/// A server that lies about offsets, never keeps what it gets, or never answers: the machine ends
/// the upload with a clear error within its budgets, never with a false success or a loop.
extension UploadStateMachineTests {
    @Test func anOffsetBeyondTheBytesSentIsAProtocolViolation() {
        var m = machine(length: 1000, chunk: 100)
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 0, length: 100))
        m.record(.offset(1000), now: .zero, jitter: 1)  // "all done" after one chunk
        guard case .fail(let error) = m.next() else { Issue.record("a false success was believed"); return }
        #expect(error.kind == .protocolViolation)
        #expect(error.message.contains("only 100 of 1000 bytes were sent"), "\(error.message)")
    }

    @Test func creationWithUploadCannotBeAcknowledgedBeyondItsData() {
        var m = growing(length: 250, createWithData: true)
        #expect(m.next() == .create(length: 250, firstChunk: 100))
        m.record(.created(location: "u", offset: 250), now: .zero, jitter: 1)
        guard case .fail(let error) = m.next() else { Issue.record("a false success was believed"); return }
        #expect(error.kind == .protocolViolation)
    }

    @Test func aResumedUploadBelievesOnlyWhatTheEarlierRunCanHaveSent() {
        var m = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(10),
                                   backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)), resuming: "u", sentBefore: 300)
        #expect(m.next() == .query(location: "u"))
        m.record(.offset(300), now: .zero, jitter: 1)
        #expect(m.next() == .send(location: "u", offset: 300, length: 100))
        var liar = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(10),
                                      backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)), resuming: "u", sentBefore: 300)
        _ = liar.next(); liar.record(.offset(1000), now: .zero, jitter: 1)
        guard case .fail(let error) = liar.next() else { Issue.record("a false success was believed"); return }
        #expect(error.kind == .protocolViolation)
    }

    /// Every way a server can answer a PATCH without keeping the data: it never advances, goes back to
    /// zero, or keeps one byte fewer than sent. Each ends within the retry budget or the byte cap.
    @Test(arguments: ["same", "zero", "one-short"])
    func answersWithoutProgressRunOutOfBudgetOrBytes(mode: String) {
        var m = machine(length: 1000, chunk: 400, budget: .seconds(3))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        var now = Duration.zero
        var sent = 0
        var failed: UploadError?
        for _ in 0..<10_000 {
            switch m.next(now: now) {
            case .send(_, let offset, let length):
                sent += length
                now += .milliseconds(10)
                let answer: Int64 = switch mode {
                case "same": offset
                case "zero": 0
                default: max(offset, offset + Int64(length) - 1)
                }
                m.record(.offset(answer), now: now, jitter: 1)
            case .query: m.record(.offset(mode == "zero" ? 0 : m.offset), now: now, jitter: 1)
            case .wait(let d): now += d
            case .fail(let error): failed = error
            default: Issue.record("unexpected action"); return
            }
            if failed != nil { break }
        }
        let error = try! #require(failed)
        #expect([.retriesExhausted, .protocolViolation].contains(error.kind), "\(error)")
        #expect(now <= .seconds(4), "bounded in time: \(now)")
        #expect(sent <= 4 * 1000 + 400, "bounded in bytes: \(sent)")
    }

    @Test func aDestinationThatNeverAnsweredFailsFastAsUnreachable() {
        var m = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(600), firstContactDuration: .seconds(5),
                                   backoff: Backoff(initial: .milliseconds(200), maximum: .seconds(10)))
        var now = Duration.zero
        var retries: [Int] = []
        var failed: UploadError?
        for _ in 0..<100 {
            switch m.next(now: now) {
            case .create: now += .milliseconds(1); m.record(.transportError("connection refused"), now: now, jitter: 1)
            case .wait(let d): retries.append(m.failures); now += d
            case .fail(let error): failed = error
            default: Issue.record("unexpected action"); return
            }
            if failed != nil { break }
        }
        #expect(failed?.kind == .unreachable)
        #expect(failed?.message.contains("connection refused") == true)
        #expect(failed?.isTransient == true)
        #expect(now < .seconds(5), "within the first-contact budget: \(now)")
        #expect(retries == Array(1...retries.count) && retries.count >= 3, "a few attempts, each reported: \(retries)")
    }

    @Test func onceTheServerAnsweredTheLongBudgetApplies() {
        var m = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(60), firstContactDuration: .seconds(2),
                                   backoff: Backoff(initial: .milliseconds(200), maximum: .seconds(1)))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        var now = Duration.zero
        var failed: UploadError?
        while failed == nil {
            switch m.next(now: now) {
            case .send, .query: m.record(.transportError("connection reset"), now: now, jitter: 1)
            case .wait(let d): now += d
            case .fail(let error): failed = error
            default: Issue.record("unexpected action"); return
            }
        }
        #expect(failed?.kind == .retriesExhausted)
        #expect(now > .seconds(50) && now <= .seconds(60), "\(now)")
    }

    @Test func requestsStayInsideTheBudget() {
        var m = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(3), maxRequestDuration: .seconds(30),
                                   backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)))
        #expect(m.requestTimeout(now: .zero) == .seconds(3))
        #expect(m.requestTimeout(now: .milliseconds(2500)) == .seconds(1), "never below a second")
        _ = m.next(); m.record(.created(location: "u"), now: .seconds(10), jitter: 1)
        #expect(m.requestTimeout(now: .seconds(11)) == .seconds(2), "progress restarts the budget")
        let long = UploadStateMachine(length: 1000, chunkSize: 100, maxRetryDuration: .seconds(600), maxRequestDuration: .seconds(30),
                                      backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1)))
        #expect(long.requestTimeout(now: .zero) == .seconds(30))
    }
}
