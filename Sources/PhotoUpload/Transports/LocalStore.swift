import Foundation
import NIOPosix
import PhotoFiles
import Synchronization

/// The embedded destination: a folder on disk (`file:///path`) with the semantics of a resumable
/// upload server. Partial uploads live in `.photoprep-uploads/` under the folder; every chunk is
/// appended at its offset and flushed (`fsync`) before it is acknowledged; the finished file is
/// renamed into place at its key, so no reader ever sees a partial object. An upload that fits in its
/// first chunk goes straight to its key the same way (creation with data, as tus has it).
struct LocalStore: UploadTransport {
    let root: URL

    var partialFolder: URL { root.appendingPathComponent(".photoprep-uploads") }

    var acceptsDataOnCreate: Bool { true }

    /// An upload whose first chunk is all of it (a photo prepared in memory, smaller than the chunk size) is
    /// written straight to its key: a temporary file beside it, flushed, renamed into place — no partial upload
    /// and no record to keep. Anything larger starts a partial upload and appends its first chunk.
    func create(length: Int64, firstChunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void) async throws(TransportFailure) -> Created {
        try validate(request.key)
        let id = randomUUID()
        if Int64(firstChunk.count) == length {
            let target = Path.join(root.path, request.key)
            try await writing { cancelled in
                do throws(AtomicFile.WriteError) {
                    try AtomicFile.write(firstChunk, to: target, piece: 64 * 1024) { written in
                        sent(written)
                        return !cancelled.isSet
                    }
                    return .written
                } catch {
                    return error.stopped ? .cancelled : .failed(error)
                }
            }
            return Created(location: id, offset: length)
        }
        guard let info = try? JSONEncoder().encode(PartialInfo(key: request.key, length: length)) else {
            throw .status(500, "\(request.key): the upload's record cannot be encoded")
        }
        // Not flushed, as before: nothing is acknowledged yet; each chunk's bytes are flushed before they are.
        do throws(AtomicFile.WriteError) {
            try AtomicFile.write([UInt8](info), to: partialFolder.appendingPathComponent("\(id).json").path, flush: false)
            try AtomicFile.write([], to: partialFolder.appendingPathComponent("\(id).part").path, flush: false)
        } catch {
            throw Self.failure(error)
        }
        guard !firstChunk.isEmpty else { return Created(location: id) }
        return Created(location: id, offset: try await send(id, offset: 0, chunk: firstChunk, request: request, sent: sent).offset)
    }

    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Acknowledgement {
        let part = partialFolder.appendingPathComponent("\(location).part")
        if let size = FileIdentity(path: part.path)?.size { return Acknowledgement(offset: size) }
        // Finished already (the rename happened before the acknowledgement was recorded)?
        if let info = try? info(location), FileManager.default.fileExists(atPath: root.appendingPathComponent(info.key).path) {
            return Acknowledgement(offset: info.length)
        }
        throw .status(404, "\(location): no such upload")
    }

    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Acknowledgement {
        let info = try info(location)
        let path = partialFolder.appendingPathComponent("\(location).part").path
        // Never made again here (a partial file at offset 0 is made at creation): a missing one is an upload that ended.
        guard let held = FileIdentity(path: path)?.size else { throw .status(404, "\(location): no such upload") }
        guard held == offset else { throw .status(409, "offset \(offset) but the upload holds \(held) bytes") }
        guard offset + Int64(chunk.count) <= info.length else { throw .status(413, "the chunk goes past the declared length") }
        let file: PartialFile
        do throws(AtomicFile.WriteError) { file = try PartialFile(path, at: offset) } catch { throw Self.failure(error) }
        defer { file.close() }
        // One trip to the I/O threads for the whole chunk: written 64 KiB at a time (progress after each, a cancel
        // honoured between them), then flushed.
        try await writing { cancelled in
            var written = 0
            do throws(AtomicFile.WriteError) {
                while written < chunk.count {
                    if cancelled.isSet { return .cancelled }
                    let piece = min(64 * 1024, chunk.count - written), at = written
                    try chunk.withUnsafeBytes { bytes -> Result<Void, AtomicFile.WriteError> in
                        Result { () throws(AtomicFile.WriteError) in try file.write(UnsafeRawBufferPointer(rebasing: bytes[at..<(at + piece)]), at: offset + Int64(at)) }
                    }.get()
                    written += piece
                    sent(written)
                }
                try file.flush()
            } catch {
                return .failed(error)
            }
            return .written
        }
        let newOffset = offset + Int64(chunk.count)
        if newOffset == info.length { try finalize(location) }
        return Acknowledgement(offset: newOffset)
    }

    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure) {
        try? FileManager.default.removeItem(at: partialFolder.appendingPathComponent("\(location).part"))
        try? FileManager.default.removeItem(at: partialFolder.appendingPathComponent("\(location).json"))
    }

    func complete(_ location: String, length: Int64, request: UploadRequest) async throws(TransportFailure) -> String {
        root.appending(path: request.key, directoryHint: .notDirectory).absoluteString
    }

    func chunkSize(forLength length: Int64) -> Int? { nil }

    private enum WriteOutcome: Sendable {
        case written
        case cancelled
        case failed(AtomicFile.WriteError)
        /// The I/O threads did not run it (shut down, or the task was cancelled first).
        case refused(TransportFailure)
    }

    /// Set when the task writing a chunk is cancelled; read by the I/O thread between pieces.
    private final class CancelFlag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    private struct PartialInfo: Codable {
        var key: String
        var length: Int64
    }

    private func info(_ location: String) throws(TransportFailure) -> PartialInfo {
        guard let data = FileManager.default.contents(atPath: partialFolder.appendingPathComponent("\(location).json").path),
            let info = try? JSONDecoder().decode(PartialInfo.self, from: data)
        else { throw .status(404, "\(location): no such upload") }
        return info
    }

    /// Moves the complete partial file to its key (atomic rename) and removes the bookkeeping.
    private func finalize(_ location: String) throws(TransportFailure) {
        let info = try info(location)
        let target = root.appendingPathComponent(info.key)
        if let reason = Path.makeFolders(target.deletingLastPathComponent().path) {
            throw Self.failure(AtomicFile.WriteError(message: "\(target.deletingLastPathComponent().path): cannot create the folder: \(reason.message)", code: reason.code))
        }
        guard rename(partialFolder.appendingPathComponent("\(location).part").path, target.path) == 0 else {
            throw .status(500, "\(target.path): \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(at: partialFolder.appendingPathComponent("\(location).json"))
    }

    /// Runs `body` on the I/O threads in one trip; `body` sees the flag a cancel of the calling task sets.
    private func writing(_ body: @escaping @Sendable (CancelFlag) -> WriteOutcome) async throws(TransportFailure) {
        let cancelled = CancelFlag()
        let outcome: WriteOutcome = await withTaskCancellationHandler {
            do throws(TransportFailure) { return try await blocking { body(cancelled) } } catch { return .refused(error) }
        } onCancel: {
            cancelled.set()
        }
        switch outcome {
        case .written: return
        case .cancelled: throw .cancelled
        case .failed(let error): throw Self.failure(error)
        case .refused(let failure): throw failure
        }
    }

    /// A write that failed, as a server would answer it: what no retry changes is refused (403 for permissions
    /// and a read-only file system, 422 for a file where a folder should be); the rest (a full disk, an I/O
    /// error) is 507, tried again.
    private static func failure(_ error: AtomicFile.WriteError) -> TransportFailure {
        guard error.lasts else { return .status(507, error.message) }
        return .status([EACCES, EPERM, EROFS].contains(error.code) ? 403 : 422, error.message)
    }

    /// Runs blocking file I/O on NIO's blocking pool, never on the cooperative threads that run every
    /// other task (a slow disk would stall them all).
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws(TransportFailure) -> T {
        do { return try await NIOThreadPool.singleton.runIfActive(body) } catch is CancellationError { throw .cancelled } catch {
            throw .status(500, "the file I/O threads are shut down: \(error)")
        }
    }

    /// Keys stay inside the folder: no empty, `.` or `..` segments, no absolute paths, no control characters.
    private func validate(_ key: String) throws(TransportFailure) {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, !key.hasPrefix("/"), segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
            !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .status(400, "invalid object key \"\(key)\"") }
    }
}
