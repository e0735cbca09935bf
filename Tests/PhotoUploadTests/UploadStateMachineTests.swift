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
        #expect(m.next() == .finish(location: "u"))
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

    @Test func retriesStopAfterTheBudgetWithAClearError() {
        var m = machine(budget: .seconds(5))
        _ = m.next(); m.record(.created(location: "u"), now: .zero, jitter: 1)
        _ = m.next(); m.record(.transportError("connection refused"), now: .seconds(1), jitter: 0)
        _ = m.next(); _ = m.next(); m.record(.transportError("connection refused"), now: .seconds(7), jitter: 0)
        guard case .fail(let error) = m.next() else { Issue.record("expected a failure"); return }
        #expect(error.kind == .retriesExhausted)
        #expect(error.message.contains("connection refused"))
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
