import Foundation
import NIOPosix
import PhotoFiles
import PhotoUpload

/// An upload's pieces written into one file for finishing: checked to follow each other without a gap
/// up to the upload's length, fetched four at a time, each written at its place.
struct PieceAssembly: Sendable {
    let objects: S3Objects
    let io: NIOThreadPool

    func write(_ pieces: [SharedUploadStore.Piece], of upload: TusUpload, to file: String) async throws(UploadStoreFailure) {
        var expected: Int64 = 0
        for piece in pieces {
            guard piece.start == expected else { throw UploadStoreFailure(kind: .gone, description: "upload \(upload.id): a piece is missing at \(expected)") }
            expected += piece.length
        }
        guard expected == upload.length else { throw UploadStoreFailure(description: "upload \(upload.id): \(expected) of \(upload.length) bytes listed") }
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw UploadStoreFailure.system(file, "cannot create") }
        defer { close(fd) }
        var failure: UploadStoreFailure?
        await BoundedConcurrency.run(count: pieces.count, limit: 4) { [objects, io] index -> UploadStoreFailure? in
            let piece = pieces[index]
            do throws(UploadStoreFailure) {
                let bytes: [UInt8]
                let got: [UInt8]?
                do { got = try await objects.get(piece.objectKey) } catch { throw UploadStoreFailure(description: "\(error)") }
                guard let got else { throw UploadStoreFailure(kind: .gone, description: "\(piece.objectKey): missing from the bucket") }
                bytes = got
                guard bytes.count == piece.length else {
                    throw UploadStoreFailure(kind: .gone, description: "\(piece.objectKey): \(bytes.count) bytes, \(piece.length) listed")
                }
                try await Self.write(bytes, at: piece.start, to: fd, path: file, io: io)
                return nil
            } catch {
                return error
            }
        } finished: { _, failed in
            failure = failure ?? failed
        }
        if let failure { throw failure }
    }

    private static func write(_ bytes: [UInt8], at offset: Int64, to fd: Int32, path: String, io: NIOThreadPool) async throws(UploadStoreFailure) {
        do {
            try await io.runIfActive {
                try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try writeAll(raw, to: fd, at: offset, path: path) }
            }
        } catch let failure as UploadStoreFailure {
            throw failure
        } catch {
            throw UploadStoreFailure(description: "\(error)")
        }
    }
}
