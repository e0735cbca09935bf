import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import PhotoServices
import Synchronization

/// Stored photos back out: `GET` and `HEAD /media/{key}`, and their thumbnails (`&size={edge}`).
///
/// Two ways in, both answering 404 — never 403 — to anyone else, so that nothing says a photo exists:
/// - a **download URL** (`?v={version}&token={token}`, `MediaRoutes.downloadURL`): no `Authorization`
///   header; the token grants exactly that one version of that one photo, and the answer may be cached
///   forever by the browser (`private, max-age=31536000, immutable`) because a new photo, or a regenerated token, is a
///   new URL — and by no shared cache, which would keep serving a URL whose token was regenerated;
/// - a **bearer token**: the storage rules' read rule (`StoredPhotos.mayRead`); `private, no-cache`.
///
/// HTTP as RFC 9110 says: a strong `ETag` (the content's SHA-256), `Last-Modified`, `304` on
/// `If-None-Match` (or on `If-Modified-Since` when there is none), one byte range (`206`, `416` when it
/// is unsatisfiable, `If-Range` honoured), `HEAD` with the same headers, `nosniff`. The bytes of a photo
/// in the local store are streamed from its file in 128 KiB chunks; a photo in S3 is a `307` to a
/// presigned `GET` valid for five minutes (the bucket serves the bytes and their ranges itself; the
/// server's CPU and bandwidth are not spent on it), after the same checks.
///
/// Reached before the router (`ServerResponder`): `GET`/`HEAD` under `/media/`.
struct MediaRoutes: Sendable {
    let photos: StoredPhotos
    let storage: any PhotoStorage
    /// Whether answers depend on the request's `Origin` (`--cors-origin`): then every one says so (`Vary: Origin`),
    /// so that a browser does not reuse an answer kept for an `<img>` for a script of an allowed origin, which
    /// the browser would then refuse for its missing CORS header.
    var varyOrigin = false
    let small = SmallObjects()
    let verified = VerifiedFiles()
    let wholeAnswers = WholeAnswers()

    /// Is `request` one for a stored photo?
    static func answers(_ request: Request) -> Bool {
        (request.method == .get || request.method == .head) && request.uri.path.hasPrefix("/media/")
    }

    func serve(_ request: Request, context: ServerContext) async throws -> Response {
        try await serve(request, key: Self.percentDecoded(request.uri.path.utf8.dropFirst("/media/".count)) ?? "", context: context)
    }

    /// `%XX` decoded byte by byte (nil for a malformed escape); Foundation's `removingPercentEncoding`
    /// bridges through `NSString` and cost 7 % of a thumbnail's answer.
    static func percentDecoded(_ encoded: Substring.UTF8View) -> String? {
        guard encoded.contains(UInt8(ascii: "%")) else { return String(Substring(encoded)) }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index != encoded.endIndex {
            let byte = encoded[index]
            index = encoded.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard index != encoded.endIndex, let high = hex(encoded[index]) else { return nil }
            index = encoded.index(after: index)
            guard index != encoded.endIndex, let low = hex(encoded[index]) else { return nil }
            index = encoded.index(after: index)
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A download URL's query, `v`, `token` and `size` (values percent-decoded), read in one pass over
    /// its bytes — Hummingbird's `queryParameters` builds a dictionary of every pair first.
    struct Query {
        var version: String?
        var token: String?
        var size: String?

        init(_ query: String?) {
            guard var query else { return }
            query.withUTF8 { bytes in
                var start = 0
                while start < bytes.count {
                    let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
                    if let equals = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")) {
                        let value = { MediaRoutes.percentDecoded(Substring(decoding: bytes[(equals + 1)..<end], as: UTF8.self).utf8) }
                        switch equals - start {
                        case 1 where bytes[start] == UInt8(ascii: "v"): version = value()
                        case 4 where bytes[start..<equals].elementsEqual("size".utf8): size = value()
                        case 5 where bytes[start..<equals].elementsEqual("token".utf8): token = value()
                        default: break
                        }
                    }
                    start = end + 1
                }
            }
        }
    }

    /// The download URL of `photo` (or of its thumbnail for `edge`): on `--public-url`, else on the request's host.
    static func downloadURL(_ photo: StoredPhoto, base: String, edge: Int? = nil) -> String {
        let path = photo.key.split(separator: "/").map { String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }
        return "\(base)/media/\(path.joined(separator: "/"))?v=\(version(photo))&token=\(photo.token)" + (edge.map { "&size=\($0)" } ?? "")
    }

    /// A photo's version in its URL: the first 16 hex digits of its SHA-256.
    static func version(_ photo: StoredPhoto) -> String { String(photo.sha256.prefix(versionLength)) }
    private static let versionLength = 16

    /// Is `version` the photo's (`version(_:)`, compared without making a string)?
    static func isVersion(_ version: String?, of photo: StoredPhoto) -> Bool {
        version.map { $0.utf8.elementsEqual(photo.sha256.utf8.prefix(versionLength)) } ?? false
    }

    func serve(_ request: Request, key: String, context: ServerContext) async throws -> Response {
        let query = Query(request.uri.query)
        let size = query.size
        let edge = size.flatMap { Int($0) }
        let photo: StoredPhoto
        let cacheControl: String
        do {
            guard size == nil || edge != nil, let path = try? StoragePath(key: key), let found = try await photos.media(key, edge: edge) else {
                return Self.notFound
            }
            if let token = query.token {
                guard let granted = Self.granted(found, key: key, edge: edge, version: query.version, token: token) else {
                    return Self.notFound
                }
                (photo, cacheControl) = (granted, Self.immutable)
            } else {
                guard case .success(let caller) = context.identity, try await photos.mayRead(caller: caller.id, path),
                    let readable = Self.served(found, key: key, edge: edge)
                else { return Self.notFound }
                (photo, cacheControl) = (readable, "private, no-cache")
            }
        } catch {
            return Problem(error).response
        }
        return try await answer(request, context: context, photo: photo, cacheControl: cacheControl)
    }

    /// A download URL's answer from memory, without waiting (`MediaOnEventLoop` answers it on the connection's
    /// event loop): what `serve` answers — same checks, same headers, same bytes — when the photo's record
    /// and its bytes are in memory and nothing else takes part (no `Authorization`, no `Origin`, no
    /// `Connection` — `close` is Hummingbird's to honour —, a granted token); nil for anything else, which
    /// `serve` answers.
    func fromMemory(_ request: HTTPRequest) -> (head: HTTPResponse, body: ByteBuffer?)? {
        guard request.method == .get || request.method == .head, let target = request.path, target.utf8.starts(with: "/media/".utf8),
            request.headerFields[.authorization] == nil, request.headerFields[.origin] == nil, request.headerFields[.connection] == nil
        else { return nil }
        let question = target.utf8.firstIndex(of: UInt8(ascii: "?"))
        let query = Query(question.map { String(target[target.index(after: $0)...]) })
        let edge = query.size.flatMap { Int($0) }
        guard let token = query.token, query.size == nil || edge != nil,
            let key = Self.percentDecoded(target.utf8[..<(question ?? target.utf8.endIndex)].dropFirst("/media/".count)),
            (try? StoragePath(key: key)) != nil,  // as `serve`: Swift's == equates look-alikes (K and KELVIN SIGN)
            let found = photos.remembered(key, edge: edge), let photo = Self.granted(found, key: key, edge: edge, version: query.version, token: token)
        else { return nil }
        switch plan(method: request.method, headers: request.headerFields, photo: photo, cacheControl: Self.immutable) {
        case .notFound:
            return nil
        case .headers(let status, let headers):
            return (Response(status: status, headers: headers).head, nil)  // as the router's: with its Content-Length
        case .content(let status, let headers, let range):
            guard photo.size <= SmallObjects.largest, let bytes = small.cached(photo.sha256),
                let part = bytes.getSlice(at: range.lowerBound, length: range.count)
            else { return nil }
            return (Response(status: status, headers: headers, body: ResponseBody(byteBuffer: part)).head, part)
        }
    }

    /// `private`: a browser keeps the answer for good, a shared cache (a CDN, a proxy) not at all — one would go on
    /// serving a photo to anyone holding its URL after its owner regenerated the token (RFC 9111 §5.2.2.7).
    static let immutable = "private, max-age=31536000, immutable"
    /// A redirect to a presigned `GET` (valid five minutes) is kept a minute, so that a kept one is still valid when followed.
    static let redirect = "private, max-age=60"

    /// What a download URL (`v`, `token`) is granted from the photo's record: the object to serve — the
    /// photo, or its thumbnail for `edge` — or nil (404) for a token or version that is not the photo's.
    static func granted(_ found: StoredPhotos.Media, key: String, edge: Int?, version: String?, token: String) -> StoredPhoto? {
        guard same(token, found.photo.token), isVersion(version, of: found.photo) else { return nil }
        return served(found, key: key, edge: edge)
    }

    /// The object a reader is served: the photo, or with `edge` its thumbnail (nil when it has none).
    static func served(_ found: StoredPhotos.Media, key: String, edge: Int?) -> StoredPhoto? {
        guard edge != nil else { return found.photo }
        guard let thumbnail = found.object else { return nil }
        var photo = found.photo
        photo.location = thumbnail.location
        photo.sha256 = thumbnail.sha256
        photo.size = thumbnail.size
        photo.key = StoragePath.thumbnailKey(of: key, edge: thumbnail.edge)
        return photo
    }

    private func answer(_ request: Request, context: ServerContext, photo: StoredPhoto, cacheControl: String) async throws -> Response {
        switch plan(method: request.method, headers: request.headers, photo: photo, cacheControl: cacheControl) {
        case .notFound:
            return Self.notFound
        case .headers(let status, let headers):
            return Response(status: status, headers: headers)
        case .content(let status, let headers, let range):
            // Only bytes that are this version's: a file that no longer is (a new photo stored over it, its record
            // not written yet) is the old version gone, 404.
            guard case .file(let file) = storage.read(key: photo.key, location: photo.location) else { return Self.notFound }
            if photo.size <= SmallObjects.largest {
                guard let bytes = await small.bytes(photo.sha256, file: { file }) else { return Self.notFound }
                return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: bytes.getSlice(at: range.lowerBound, length: range.count)!))
            }
            guard let identity = await verified.identity(of: file, sha256: photo.sha256, size: photo.size) else { return Self.notFound }
            return Response(status: status, headers: headers, body: VerifiedFiles.stream(file, identity: identity, range: range))
        }
    }

    /// How a request for `photo` is answered, decided from its method and headers alone.
    enum Plan {
        case notFound
        /// No content: 304, 307 to a presigned `GET`, 416, `HEAD`, an empty photo.
        case headers(HTTPResponse.Status, HTTPFields)
        /// These bytes of the photo's content (200, or 206 for a range).
        case content(HTTPResponse.Status, HTTPFields, ClosedRange<Int>)
    }

    /// `Self.plan`, with the plain answer's headers — no conditional or range header asked — kept by the
    /// photo's version (`WholeAnswers`).
    func plan(method: HTTPRequest.Method, headers asked: HTTPFields, photo: StoredPhoto, cacheControl: String) -> Plan {
        let plain = asked[.range] == nil && asked[.ifNoneMatch] == nil && asked[.ifModifiedSince] == nil
        if plain, let headers = wholeAnswers.headers(photo, cacheControl: cacheControl) {
            return method == .head ? .headers(.ok, headers) : .content(.ok, headers, 0...Int(photo.size) - 1)
        }
        let plan = Self.plan(method: method, headers: asked, photo: photo, cacheControl: cacheControl, storage: storage, varyOrigin: varyOrigin)
        if plain, case .content(.ok, let headers, _) = plan { wholeAnswers.keep(headers, for: photo, cacheControl: cacheControl) }
        return plan
    }

    static func plan(
        method: HTTPRequest.Method, headers asked: HTTPFields, photo: StoredPhoto, cacheControl: String, storage: any PhotoStorage, varyOrigin: Bool = false
    ) -> Plan {
        let etag = "\"" + photo.sha256 + "\""
        let read = storage.read(key: photo.key, location: photo.location)
        let inStore = if case .file = read { true } else { false }
        let cacheControl = !inStore && cacheControl == immutable ? redirect : cacheControl
        // Appended to an array and made into `HTTPFields` once: setting fields one by one looks each name up.
        var fields = [
            HTTPField(name: .eTag, value: etag), HTTPField(name: .lastModified, value: HTTPDate.format(photo.storedAt)),
            HTTPField(name: .cacheControl, value: cacheControl), HTTPField(name: Self.nosniff, value: "nosniff"),
        ]
        if varyOrigin { fields.append(HTTPField(name: .vary, value: "Origin")) }
        if Self.notModified(asked, etag: etag, storedAt: photo.storedAt) { return .headers(.notModified, HTTPFields(fields)) }
        guard inStore else {
            guard case .redirect(let presigned) = read else { return .notFound }
            fields.append(HTTPField(name: .location, value: presigned.absoluteString))
            return .headers(.temporaryRedirect, HTTPFields(fields))
        }
        fields.append(HTTPField(name: .contentType, value: "image/jpeg"))
        fields.append(HTTPField(name: .acceptRanges, value: "bytes"))
        let size = Int(photo.size)
        var status = HTTPResponse.Status.ok
        var range = 0...max(0, size - 1)
        if let wanted = asked[.range], asked[.ifRange].map({ $0 == etag }) ?? true {
            switch ByteRange.parse(wanted, size: size) {
            case .whole:
                break
            case .part(let part):
                status = .partialContent
                range = part
                fields.append(HTTPField(name: .contentRange, value: "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"))
            case .unsatisfiable:
                fields.append(HTTPField(name: .contentRange, value: "bytes */\(size)"))
                fields.append(HTTPField(name: .contentLength, value: "0"))
                return .headers(.rangeNotSatisfiable, HTTPFields(fields))
            }
        }
        fields.append(HTTPField(name: .contentLength, value: String(size == 0 ? 0 : range.count)))
        if method == .head || size == 0 { return .headers(status, HTTPFields(fields)) }
        return .content(status, HTTPFields(fields), range)
    }

    /// `If-None-Match` naming the photo's tag (or `*`); without it, `If-Modified-Since` at or after the
    /// time it was stored (to the second, as HTTP dates go).
    static func notModified(_ headers: HTTPFields, etag: String, storedAt: Date) -> Bool {
        if let tags = headers[.ifNoneMatch] {
            return tags.split(separator: ",").contains { tag in
                let tag = tag.trimmingCharacters(in: .whitespaces)
                return tag == "*" || tag == etag || tag == "W/\(etag)"
            }
        }
        if let since = headers[.ifModifiedSince].flatMap(HTTPDate.parse) {
            return storedAt.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        return false
    }

    /// Compares a token in constant time (as long as the lengths match).
    static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static let nosniff = HTTPField.Name("X-Content-Type-Options")!
    static var notFound: Response { Problem(.notFound, "not-found", "no such photo").response }
}

/// One `Range: bytes=…` (RFC 9110 §14.1.2) against a representation of `size` bytes.
enum ByteRange: Equatable {
    /// No range to honour: the header is not one single bytes range (several are answered whole, too).
    case whole
    case part(ClosedRange<Int>)
    /// A valid range that starts past the end, or an empty suffix: 416.
    case unsatisfiable

    static func parse(_ header: String, size: Int) -> ByteRange {
        let header = header.trimmingCharacters(in: .whitespaces)
        guard header.lowercased().hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { return .whole }
        if parts[0].isEmpty {
            // The last n bytes.
            guard let n = Int(parts[1]) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - n)...(size - 1))
        }
        guard let first = Int(parts[0]) else { return .whole }
        let last = parts[1].isEmpty ? size - 1 : Int(parts[1]) ?? -1
        guard last >= first else { return parts[1].isEmpty ? .unsatisfiable : .whole }
        guard first < size else { return .unsatisfiable }
        return .part(first...min(last, size - 1))
    }
}

/// HTTP dates (IMF-fixdate, RFC 9110 §5.6.7).
enum HTTPDate {
    /// Formatted by hand from `gmtime_r` (a `DateFormatter` is costly to make, and not safe to share),
    /// and kept: the same photos' dates are formatted again and again.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        if let known = formatted.withLock({ $0[seconds] }) { return known }
        let text = formatNow(seconds)
        formatted.withLock { known in
            if known.count >= 4096 { known.removeAll(keepingCapacity: true) }
            known[seconds] = text
        }
        return text
    }
    private static let formatted = Mutex<[Int: String]>([:])

    private static func formatNow(_ whole: Int) -> String {
        var seconds = time_t(whole)
        var t = tm()
        gmtime_r(&seconds, &t)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][Int(t.tm_wday)]
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(t.tm_mon)]
        return "\(day), \(two(t.tm_mday)) \(month) \(t.tm_year + 1900) \(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }
    /// An HTTP date in any of the three forms a recipient must read (RFC 9110 §5.6.7) — IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850's (`Sunday, 06-Nov-94 08:49:37 GMT`) and C's `asctime`
    /// (`Sun Nov  6 08:49:37 1994`) — or nil. Read by hand: a `DateFormatter` made for each request cost more than
    /// the rest of the answer, and Glibc's `strptime` is not in Swift's view of it.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" })
        let (day, month, year, clock): (Substring, Substring, Substring, ArraySlice<Substring>)
        switch fields.count {
        case 8 where fields[7] == "GMT": (day, month, year, clock) = (fields[1], fields[2], fields[3], fields[4...6])
        case 7: (day, month, year, clock) = (fields[2], fields[1], fields[6], fields[3...5])
        default: return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields[0].allSatisfy(\.isLetter), let m = months.firstIndex(where: { $0 == month }), let d = Int(day), (1...31).contains(d),
            var y = Int(year), year.count == 2 || year.count == 4, let h = Int(clock[clock.startIndex]), let mi = Int(clock[clock.startIndex + 1]),
            let sec = Int(clock[clock.startIndex + 2]), (0...23).contains(h), (0...59).contains(mi), (0...60).contains(sec)
        else { return nil }
        if year.count == 2 { y += y < 70 ? 2000 : 1900 }  // RFC 850: a year more than 50 years ahead is in the past
        // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
        let march = m < 2 ? y - 1 : y  // years counted from March
        let era = (march >= 0 ? march : march - 399) / 400
        let yearOfEra = march - era * 400
        let dayOfYear = (153 * (m < 2 ? m + 10 : m - 2) + 2) / 5 + d - 1
        let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + h * 3600 + mi * 60 + sec))
    }
}

/// The headers of the plain answer — 200, the whole photo, no conditional or range header asked — by the
/// photo's version and its `Cache-Control`: the same photo (its content, its time, its size) always gets the
/// same ones, and making `HTTPFields` was a tenth of a thumbnail's answer from memory. Only photos in the
/// local store have such an answer (one in S3 is a redirect to a URL that expires). Emptied when full.
final class WholeAnswers: Sendable {
    private struct Name: Hashable {
        var sha256: String
        var storedAt: Date
        var size: Int64
        var cacheControl: String
    }
    private let known = Mutex<[Name: HTTPFields]>([:])

    func headers(_ photo: StoredPhoto, cacheControl: String) -> HTTPFields? {
        known.withLock { $0[Name(sha256: photo.sha256, storedAt: photo.storedAt, size: photo.size, cacheControl: cacheControl)] }
    }

    func keep(_ headers: HTTPFields, for photo: StoredPhoto, cacheControl: String) {
        known.withLock { known in
            if known.count >= 10_000 { known.removeAll(keepingCapacity: true) }
            known[Name(sha256: photo.sha256, storedAt: photo.storedAt, size: photo.size, cacheControl: cacheControl)] = headers
        }
    }
}

/// Small stored objects — up to 512 KiB: thumbnails, avatars, group photos (normalised under 500 KiB) — kept
/// in memory by their SHA-256, so that a busy list of avatars is answered without opening a file each time,
/// and on the event loop (`MediaOnEventLoop`). The bytes of a version never change, so a
/// cached object can never be stale (the photo's record, its token and the read rules are still checked
/// on every request); one read from disk whose bytes do not hash to the record's version (the file was
/// replaced meanwhile) is not kept. At most 64 MiB, the oldest dropped first.
final class SmallObjects: Sendable {
    static let largest = 512 * 1024
    static let capacity = 64 << 20
    private let state = Mutex<(objects: [String: ByteBuffer], order: [String], total: Int)>(([:], [], 0))

    /// The bytes whose SHA-256 is `sha256` if they are in memory.
    func cached(_ sha256: String) -> ByteBuffer? { state.withLock { $0.objects[sha256] } }

    /// The bytes whose SHA-256 is `sha256`: from memory, or read from the file `file()` names and kept.
    func bytes(_ sha256: String, file: () -> String?) async -> ByteBuffer? {
        if let cached = cached(sha256) { return cached }
        guard let file = file(), let data = try? await NIOThreadPool.singleton.runIfActive({ FileManager.default.contents(atPath: file) }),
            data.count <= Self.largest, StoredPhotos.Content(of: [UInt8](data)).sha256 == sha256
        else { return nil }
        let buffer = ByteBuffer(bytes: data)
        state.withLock { state in
            guard state.objects[sha256] == nil else { return }
            state.objects[sha256] = buffer
            state.order.append(sha256)
            state.total += buffer.readableBytes
            while state.total > Self.capacity, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.total -= state.objects.removeValue(forKey: oldest)?.readableBytes ?? 0
            }
        }
        return buffer
    }
}
