import CoreMetrics
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoPrep

/// How an upload request's body is received: streamed into the upload against shutdown and its pace, sniffed, checked,
/// and finished with the last byte.
extension UploadHandler {
    // MARK: - Receiving bytes

    /// Streams the body to the end of the upload, holding at most `FileAppender.batch` bytes of it, and returns the
    /// new offset only after `fsync` — or, for the body that completes the upload, after its photo is stored. The
    /// first bytes must sniff as a photo the pipeline decodes (else the upload is deleted: 415); a body longer than
    /// the upload, or one whose checksum does not match, is cut back to where it started. The last byte triggers
    /// `finish`.
    func receive(_ upload: inout TusUpload, at offset: Int64, _ body: RequestBody, checksum: Tus.Checksum?, log: RequestLogEntry) async throws -> Int64 {
        let sniffLength = Int(min(Int64(Self.sniffLength), upload.length))
        let known: [UInt8], appender: any UploadAppender
        do throws(UploadStoreFailure) {
            known = offset > 0 && offset < sniffLength ? try await store.head(upload.id, count: Int(offset)) : []
            appender = try await store.appender(upload.id, at: offset, wholeRequest: checksum != nil)
        } catch {
            throw refusal(error)
        }
        defer { appender.end() }
        let reading = BodyReading(
            upload: upload, remaining: upload.length - offset, sniffLength: sniffLength, head: known, sniffed: offset >= sniffLength,
            hasher: checksum?.hasher())
        // The body is read in a child task raced against shutdown and against its pace: a stopping server
        // does not wait for a slow client, nor does a client trickling bytes hold a request forever; what
        // arrived is kept (flushed), the answer says how much, and the client resumes there.
        let read = await withTaskGroup(of: BodyReading.Outcome?.self) { group in
            group.addTask { await self.read(body, into: appender, reading, log: log) }
            group.addTask {
                await self.stopping.wait()
                return nil
            }
            group.addTask { [pace] in
                let started = ContinuousClock.now
                while !Task.isCancelled {
                    let deadline = pace.deadline(started: started, received: log.bytes)
                    if ContinuousClock.now >= deadline { return .tooSlow(received: log.bytes, seconds: Double((ContinuousClock.now - started).components.seconds)) }
                    try? await Task.sleep(until: deadline)
                }
                return nil
            }
            // The first outcome decides (the reading, cancelled by another, then only says it stopped).
            var outcome: BodyReading.Outcome?
            for await result in group {
                group.cancelAll()
                if outcome == nil { outcome = result }
            }
            return outcome ?? .stopped
        }
        var stopped = false
        var head = reading.head, sniffed = reading.sniffed
        switch read {
        case .refused(let refused):
            throw refused
        case .failed(let error):
            // The client went away: keep what arrived, flushed, for a resume.
            try? await appender.sync()
            throw error
        case .stopped:
            stopped = true
            if checksum != nil { await appender.rollback() }  // the checksum covers the whole body: nothing verified
        case .tooSlow(let received, let seconds):
            if checksum != nil { await appender.rollback() } else { try? await appender.sync() }
            throw UploadRefusal(
                .tooSlow,
                "the body sent \(received) bytes in \(Int(seconds)) s, slower than \(pace.minRate) bytes a second; what arrived is kept: resume from the upload's offset")
        case .complete(let hash, let received, let done):
            head = received
            sniffed = done
            if let checksum, hash != checksum.digest {
                await appender.rollback()
                throw UploadRefusal(.checksumMismatch, "the body's \(checksum.algorithm.rawValue) checksum does not match Upload-Checksum")
            }
        }
        let newOffset = offset + appender.count
        let finishing = UploadLifecycle.received(upload, offset: newOffset, stopping: stopped) == .finish
        // The bytes that complete the upload are not flushed: nothing is acknowledged until the photo made from
        // them is stored, durably. Only when it is not are they flushed, before the answer, like any request's.
        do { try await finishing ? appender.writeOut() : appender.sync() } catch { throw refusal(error) }
        if !sniffed, newOffset == upload.length { try await requirePhoto(head, upload) }
        if finishing {
            do { try await finish(&upload) } catch {
                do { try await appender.sync() } catch let failure { throw refusal(failure) }
                throw error
            }
        }
        return newOffset
    }

    /// What one request body's reading starts from.
    struct BodyReading: Sendable {
        enum Outcome: Sendable {
            /// The body ended: its hash (when a checksum was sent), the first bytes of the upload, whether they were sniffed.
            case complete(hash: [UInt8]?, head: [UInt8], sniffed: Bool)
            case refused(UploadRefusal)
            case failed(any Error)
            /// The server is stopping.
            case stopped
            /// The body arrives slower than `BodyPace` allows.
            case tooSlow(received: Int64, seconds: Double)
        }

        var upload: TusUpload
        var remaining: Int64
        var sniffLength: Int
        var head: [UInt8]
        var sniffed: Bool
        var hasher: Tus.Hasher?
    }

    /// Appends the body's buffers one at a time; refuses a body longer than the upload, and (deleting
    /// the upload) one whose first bytes are not a photo the pipeline decodes (`ImageFormat.sniff`).
    private func read(_ body: RequestBody, into appender: any UploadAppender, _ start: BodyReading, log: RequestLogEntry) async -> BodyReading.Outcome {
        var state = start
        do {
            for try await buffer in body {
                if Task.isCancelled { return .stopped }
                guard appender.count + Int64(buffer.readableBytes) <= state.remaining else {
                    await appender.rollback()
                    return .refused(UploadRefusal(.tooLarge, "the body goes past Upload-Length (\(state.upload.length) bytes)"))
                }
                buffer.withUnsafeReadableBytes { bytes in
                    state.hasher?.update(bytes)
                    if !state.sniffed { state.head += bytes.prefix(state.sniffLength - state.head.count) }
                }
                if !state.sniffed, state.head.count >= state.sniffLength {
                    state.sniffed = true
                    do { try await requirePhoto(state.head, state.upload) } catch { return .refused(error) }
                }
                do { try await appender.write(buffer) } catch { return .refused(refusal(error)) }
                metrics.bytesReceived.increment(by: Int64(buffer.readableBytes))
                log.received(buffer.readableBytes)
            }
        } catch {
            return Task.isCancelled ? .stopped : .failed(error)
        }
        if Task.isCancelled { return .stopped }
        return .complete(hash: state.hasher?.finalize(), head: state.head, sniffed: state.sniffed)
    }

    /// 415, and the upload deleted, unless `head` starts a JPEG, PNG, HEIC/HEIF, AVIF or WebP.
    private func requirePhoto(_ head: [UInt8], _ upload: TusUpload) async throws(UploadRefusal) {
        do {
            _ = try ImageFormat.sniff(head)
        } catch {
            _ = try? await store.delete(upload.id)
            metrics.uploadsInProgress.decrement()
            throw UploadRefusal(.notAPhoto, "\(upload.key): \(error.message)")
        }
    }
}
