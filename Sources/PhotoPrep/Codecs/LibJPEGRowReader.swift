internal import CJPEGStream

#if canImport(Glibc)
import Glibc
#endif

/// A JPEG file decoded row by row with libjpeg-turbo's scanline API (`CJPEGStream`), the file read 64 KiB at a
/// time: what TurboJPEG's one-call decode cannot do, since it takes the whole file and fills a whole image. A
/// baseline JPEG then holds a few rows; a progressive one its DCT coefficients, which libjpeg needs until the
/// last scan (the floor for any decoder, `djpeg` included). Closes its file and frees libjpeg in `deinit`.
final class LibJPEGRowReader {
    private let file: Int32
    private let stream: OpaquePointer
    let width: Int
    let height: Int
    let channels: Int

    /// Opens `path` and starts decoding at 1/`denominator` scale, as grey or RGB rows.
    init(path: String, denominator: Int, grey: Bool, strict: Bool) throws(PhotoPrepError) {
        file = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)  // a FIFO put in the file's place never blocks the open
        guard file >= 0 else { throw PhotoPrepError(.read, .io, "cannot open: \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(file)
            throw PhotoPrepError(.read, .io, "not a regular file")
        }
        var reason = [CChar](repeating: 0, count: 256)
        guard let stream = photoprep_jpeg_open(file, Int32(denominator), grey ? PHOTOPREP_JPEG_GREY : PHOTOPREP_JPEG_RGB, strict ? 1 : 0, &reason, reason.count) else {
            close(file)
            throw Self.failure(reason)
        }
        self.stream = stream
        width = Int(photoprep_jpeg_width(stream))
        height = Int(photoprep_jpeg_height(stream))
        channels = grey ? 1 : 3
    }

    deinit {
        photoprep_jpeg_close(stream)
        close(file)
    }

    /// Decodes the next `rows` rows into `out`, one after the other; returns how many there were.
    func read(rows: Int, into out: UnsafeMutablePointer<UInt8>) throws(PhotoPrepError) -> Int {
        var reason = [CChar](repeating: 0, count: 256)
        let done = photoprep_jpeg_read(stream, out, width * channels, Int32(rows), &reason, reason.count)
        guard done >= 0 else { throw Self.failure(reason) }
        return Int(done)
    }

    /// libjpeg's first warning, in TurboJPEG's words (a truncated file: "Premature end of JPEG file").
    var warning: String? { photoprep_jpeg_warning(stream).map { String(cString: $0) } }

    private static func failure(_ reason: [CChar]) -> PhotoPrepError {
        let message = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return PhotoPrepError(.decode, .corrupt, "libjpeg-turbo: \(message)")
    }
}
