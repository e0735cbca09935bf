import Foundation
import NIOCore
import NIOPosix
import PhotoFiles
import Synchronization

/// Writes one request's bytes at the end of an upload's data file (a `PartialFile`). Nothing written counts until
/// `sync()`; `rollback()` cuts the file back to where this request started (a checksum mismatch, too
/// many bytes). The body's buffers (NIO reads at most 64 KiB at a time, 28 KiB on average over loopback) are
/// gathered up to `batch` bytes and written in one trip to the I/O threads: a 1.3 MB photo in 6 trips, not 47
/// (each trip wakes a thread there and one back).
final class FileAppender: UploadAppender {
    let file: PartialFile
    let start: Int64
    let io: NIOThreadPool
    /// Run on the io threads after each `sync`'s `fsync`, before its bytes count (the upload's record flushed).
    let beforeAcknowledging: @Sendable () throws(UploadStoreFailure) -> Void
    /// Told the offset each `sync` (or `rollback`) made durable.
    let flushed: @Sendable (Int64) -> Void
    /// Told when the request is done with it (`end`).
    let ended: @Sendable () -> Void
    /// Bytes gathered before a trip to the I/O threads.
    static let batch = 256 * 1024
    /// Bytes taken from the body so far (written or gathered).
    private let taken = Atomic<Int64>(0)
    /// Buffers taken but not written yet, and where they go.
    private let gathered = Mutex<(buffers: [ByteBuffer], bytes: Int)>(([], 0))

    init(
        file: PartialFile, start: Int64, io: NIOThreadPool, beforeAcknowledging: @escaping @Sendable () throws(UploadStoreFailure) -> Void,
        flushed: @escaping @Sendable (Int64) -> Void, ended: @escaping @Sendable () -> Void
    ) {
        self.file = file
        self.start = start
        self.io = io
        self.beforeAcknowledging = beforeAcknowledging
        self.flushed = flushed
        self.ended = ended
    }

    func end() { ended() }

    deinit { file.close() }

    /// Bytes taken from this request so far.
    var count: Int64 { taken.load(ordering: .relaxed) }

    func write(_ buffer: ByteBuffer) async throws(UploadStoreFailure) {
        let full = gathered.withLock { gathered in
            gathered.buffers.append(buffer)
            gathered.bytes += buffer.readableBytes
            return gathered.bytes >= Self.batch
        }
        taken.add(Int64(buffer.readableBytes), ordering: .relaxed)
        if full { try await writeOut() }
    }

    /// Writes the gathered buffers at the end of what this request wrote before them, without `fsync`: read back
    /// from the page cache by the pipeline, and deleted once the photo is stored — a file that lives a second
    /// or two is never even given blocks on disk (ext4 allocates them at writeback).
    func writeOut() async throws(UploadStoreFailure) {
        let (buffers, bytes) = gathered.withLock { gathered in
            defer { gathered = ([], 0) }
            return gathered
        }
        guard bytes > 0 else { return }
        let first = start + count - Int64(bytes)
        let file = self.file
        try await run {
            var at = first
            for buffer in buffers {
                try buffer.withUnsafeReadableBytes { (bytes: UnsafeRawBufferPointer) throws(AtomicFile.WriteError) in try file.write(bytes, at: at) }
                at += Int64(buffer.readableBytes)
            }
        }
    }

    /// Writes what is gathered and flushes it to disk; after this the bytes may be acknowledged.
    func sync() async throws(UploadStoreFailure) {
        try await writeOut()
        let file = self.file, beforeAcknowledging = self.beforeAcknowledging
        let offset = start + count
        try await run {
            try file.flush()
            try beforeAcknowledging()
        }
        flushed(offset)
    }

    /// Cuts the file back to where this request started.
    func rollback() async {
        let file = self.file, start = self.start
        gathered.withLock { $0 = ([], 0) }
        try? await run { file.cut(to: start) }
        taken.store(0, ordering: .relaxed)
        flushed(start)
    }

    private func run(_ body: @escaping @Sendable () throws -> Void) async throws(UploadStoreFailure) {
        do {
            try await io.runIfActive { try body() }
        } catch let error as UploadStoreFailure {
            throw error
        } catch let error as AtomicFile.WriteError {
            throw UploadStoreFailure(error)
        } catch {
            throw UploadStoreFailure(description: "\(error)")
        }
    }
}

/// Writes all of `bytes` at `offset` of the open file `fd` (`path` names it in the error).
func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, at offset: Int64, path: String) throws(UploadStoreFailure) {
    do { try PartialFile(fd: fd, path: path).write(bytes, at: offset) } catch { throw UploadStoreFailure(error) }
}
