import Foundation
import NIOPosix
import PhotoFiles
import Synchronization

/// The uploads in the data folder, one pair of files each under `folder`: `{id}.info` (JSON, written atomically)
/// and `{id}.bin` (the bytes received so far, in order). The offset is the size of `.bin`; a PATCH
/// is acknowledged only after `fsync` (the one that completes the upload, once its photo is stored), so an
/// acknowledged byte survives a crash of the server. The record and the folder's entries are flushed with an
/// upload's first acknowledged bytes, not when it is created (`flushRecord`). Blocking
/// file calls run on the `io` thread pool, never on the cooperative pool. One writer per upload: `lock`.
final class LocalUploadStore: PartialUploadStore {
    let folder: URL
    let io: NIOThreadPool
    /// While a request writes to an upload (from its appender until that ends): the offset its last `fsync` made
    /// durable (what HEAD reports; the file may already hold more that is not flushed yet).
    private let durable = Mutex<[String: Int64]>([:])
    /// The records by id: read from the folder the first time one is needed, then kept with every change —
    /// so the quota check on each new upload and the record each request looks up read no files (with every
    /// upload's record read for each creation, 100 uploads at once made 10,000 reads). This process is the
    /// folder's only writer; instances that share uploads use `SharedUploadStore`.
    private let records = Mutex<[String: TusUpload]?>(nil)
    /// Uploads whose record and folder entries are not flushed yet (`flushRecord`).
    private let unflushed = Mutex<Set<String>>([])

    init(folder: URL, io: NIOThreadPool) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.folder = folder
        self.io = io
    }

    func dataPath(_ id: String) -> String { Path.join(folder.path, "\(id).bin") }
    private func infoPath(_ id: String) -> String { Path.join(folder.path, "\(id).info") }

    // MARK: - Records

    /// Creates the upload's empty data file and its record, written atomically, in one trip to the io threads —
    /// neither flushed: they are with the upload's first acknowledged bytes (`flushRecord`). An upload created but
    /// sent nothing before a power cut may be unknown afterwards, which a client is told (404) and answers by
    /// creating it again, with nothing acknowledged lost; one whose first request completes it (most photos) never
    /// waits for these two fsyncs — each a cache flush of the disk — at all (`strace` of 100 uploads: 500 fsyncs → 300).
    func create(_ upload: TusUpload) async throws(UploadStoreFailure) {
        _ = await loaded()
        let data = dataPath(upload.id), info = infoPath(upload.id)
        try await run {
            let fd = open(data, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard fd >= 0 else { throw UploadStoreFailure.system(data, "cannot create") }
            close(fd)
            let record = try Self.record(upload)
            do throws(AtomicFile.WriteError) { try AtomicFile.write(record, to: info, permissions: 0o600, flush: false) } catch {
                throw UploadStoreFailure(error)
            }
        }
        unflushed.withLock { _ = $0.insert(upload.id) }
        records.withLock { $0?[upload.id] = upload }
    }

    /// Flushes the upload's record and the folder's entries (its record's and its data file's), when not done
    /// since they were made: before its first bytes are acknowledged, so that what is acknowledged is found after
    /// a power cut. Blocking: called on the io threads.
    private func flushRecord(_ id: String) throws(UploadStoreFailure) {
        guard unflushed.withLock({ $0.contains(id) }) else { return }
        for (path, flags) in [(infoPath(id), O_RDONLY), (folder.path, O_RDONLY | O_DIRECTORY)] {
            let fd = open(path, flags)
            guard fd >= 0, fsync(fd) == 0 else {
                if fd >= 0 { close(fd) }
                throw UploadStoreFailure.system(path, "cannot flush")
            }
            close(fd)
        }
        unflushed.withLock { _ = $0.remove(id) }
    }

    /// Whether the upload's record and folder entries wait for its first acknowledged bytes to be flushed.
    func recordIsUnflushed(_ id: String) -> Bool { unflushed.withLock { $0.contains(id) } }

    /// Marks the upload stored: its record rewritten in place — one `pwrite` at the start of the file, padded with
    /// spaces (which JSON allows) when shorter, so that no new file is made and no old one freed — and not flushed
    /// (see `finishing`); then its data file deleted.
    private func saveStored(_ upload: TusUpload) async throws(UploadStoreFailure) {
        _ = await loaded()
        let info = infoPath(upload.id), data = dataPath(upload.id)
        try await run {
            var json = try Self.record(upload)
            let fd = open(info, O_RDWR)
            guard fd >= 0 else { throw UploadStoreFailure(description: "\(info): cannot open: \(String(cString: strerror(errno)))") }
            let size = Int(lseek(fd, 0, SEEK_END))
            if size > json.count { json += [UInt8](repeating: 0x20, count: size - json.count) }
            do {
                try json.withUnsafeBytes { try writeAll($0, to: fd, at: 0, path: info) }
            } catch {
                close(fd)
                throw error
            }
            close(fd)
        }
        // The record says stored before the bytes go: an offset read after they went is never taken for an upload
        // still receiving (`UploadHandler.offset(of:caller:)` reads the record again after the offset).
        records.withLock { $0?[upload.id] = upload }
        try await run { unlink(data) }
    }

    private static func record(_ upload: TusUpload) throws -> [UInt8] { [UInt8](try JSONEncoder().encode(upload)) }

    /// The upload's record, or nil when there is none (never created, deleted, or expired and swept).
    func upload(_ id: String) async throws(UploadStoreFailure) -> TusUpload? {
        guard TusUpload.isValidID(id) else { return nil }
        return await loaded()[id]
    }

    /// The records, read from the folder once.
    private func loaded() async -> [String: TusUpload] {
        if let known = records.withLock({ $0 }) { return known }
        let folder = self.folder
        // A folder that cannot be listed gives no records, and nothing is kept: the next call reads it again.
        guard let read = try? await run({ () throws -> [String: TusUpload] in
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            let uploads = names.filter { $0.hasSuffix(".info") }.compactMap { name in
                FileManager.default.contents(atPath: Path.join(folder.path, name)).flatMap {
                    try? JSONDecoder().decode(TusUpload.self, from: $0)
                }
            }
            return Dictionary(uploads.map { ($0.id, $0) }) { first, _ in first }
        }) else { return [:] }
        return records.withLock { known in
            if let known { return known }  // read meanwhile by another task, and kept since: that one stands
            known = read
            return read
        }
    }

    /// Bytes received and flushed: while a request writes, what its last `fsync` covered; otherwise the
    /// size of the data file (after a crash, what survived); 0 when it is gone.
    func offset(_ id: String) async throws(UploadStoreFailure) -> Int64 {
        if let flushed = durable.withLock({ $0[id] }) { return flushed }
        let path = dataPath(id)
        return (try? await run { FileIdentity(path: path)?.size ?? 0 }) ?? 0
    }

    /// Never: the offset between requests is the data file's size, so a file cut short or removed is reported
    /// as what it holds (the client sends the rest again from there), never as more.
    func lostBytes(_ id: String) async throws(UploadStoreFailure) -> Bool { false }

    /// The first `count` bytes received.
    func head(_ id: String, count: Int) async throws(UploadStoreFailure) -> [UInt8] {
        let path = dataPath(id)
        return (try? await run { () throws -> [UInt8] in
            guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
            defer { try? handle.close() }
            return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
        }) ?? []
    }

    /// Every upload on disk (for the expiry sweep and the count of uploads in progress).
    func all() async throws(UploadStoreFailure) -> [TusUpload] {
        Array(await loaded().values)
    }

    /// Removes the upload's files (the record last, so a crash in between leaves a record to sweep). Its
    /// finishing holds the upload's lock, so the caller's lock already keeps it out of the way.
    @discardableResult func delete(_ id: String) async throws(UploadStoreFailure) -> Bool {
        let data = dataPath(id), info = infoPath(id)
        try? await run {
            unlink(data)
            unlink(info)
        }
        records.withLock { _ = $0?.removeValue(forKey: id) }
        unflushed.withLock { _ = $0.remove(id) }
        return true
    }

    // MARK: - Finishing

    /// The caller holds the upload's lock, which is all the exclusion one machine needs.
    func finishing(
        _ upload: TusUpload, within deadline: FinishDeadline, _ store: @escaping @Sendable (_ file: String) async -> Result<String, FinishRefusal>
    ) async -> Result<String, FinishRefusal>? {
        let file = dataPath(upload.id)
        let outcome = await deadline.run { await store(file) }
        switch outcome {
        case .success:
            var stored = upload
            stored.state = .stored
            // Kept as a record (not its bytes) until it expires, so a client that asks again learns it finished.
            // Not flushed: the photo and its row are durable already, and after a power cut that lost this record
            // the old one is found with the bytes (finished again: the same photo at the same key), with part of
            // them (the last request's bytes are not flushed either, `UploadHandler.receive`: a client told the
            // upload finished sends nothing more, and the record expires) or without them (offset 0) — never an
            // acknowledged byte lost. Fsyncs and waits fewer on every upload's last request.
            try? await saveStored(stored)
        case .failure(let refusal) where !refusal.keepsBytes:
            _ = try? await delete(upload.id)
        case .failure:
            break
        }
        return outcome
    }

    /// Deleting expired uploads is all the data folder needs.
    func housekeeping(now: Date) async {}

    // MARK: - Appending

    /// The data file opened for appending at `offset` (which must be its size). At offset 0 it is made again if it
    /// is missing: after a power cut that kept a finished upload's old record but not its data (`finishing`), the
    /// client sends the bytes again.
    func appender(_ id: String, at offset: Int64, wholeRequest: Bool) async throws(UploadStoreFailure) -> any UploadAppender {
        let path = dataPath(id)
        let file = try await run { () throws -> PartialFile in
            do throws(AtomicFile.WriteError) { return try PartialFile(path, at: offset) } catch { throw UploadStoreFailure(error) }
        }
        durable.withLock { $0[id] = offset }
        // At offset 0 the data file may have been made just now, its folder entry not flushed.
        if offset == 0 { unflushed.withLock { _ = $0.insert(id) } }
        return FileAppender(
            file: file, start: offset, io: io, beforeAcknowledging: { [self] () throws(UploadStoreFailure) in try flushRecord(id) },
            flushed: { [self] flushed in durable.withLock { $0[id] = flushed } }, ended: { [self] in durable.withLock { $0[id] = nil } })
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws(UploadStoreFailure) -> T {
        do {
            return try await io.runIfActive { try body() }
        } catch let error as UploadStoreFailure {
            throw error
        } catch {
            throw UploadStoreFailure(description: "\(error)")
        }
    }
}
