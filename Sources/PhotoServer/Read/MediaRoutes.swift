import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoPrep
import PhotoServices

/// Stored photos back out: `GET` and `HEAD /media/{key}`, and their thumbnails (`&size={edge}`): JPEG, or the
/// thumbnail's WebP when it has one and the request's `Accept` names `image/webp` (every thumbnail answer says
/// `Vary: Accept`, so that no cache hands one client's format to another), or when asked for it (`&format=webp`:
/// 404 when there is none).
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
/// is unsatisfiable, `If-Range` honoured), `HEAD` with the same headers, `nosniff`, `Referrer-Policy: no-referrer`. The bytes of a photo
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
        var format: String?

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
                        case 6 where bytes[start..<equals].elementsEqual("format".utf8): format = value()
                        default: break
                        }
                    }
                    start = end + 1
                }
            }
        }
    }

    /// The download URL of `photo` (or of its thumbnail for `edge`, or that thumbnail's WebP): on `--public-url`, else on the
    /// request's host.
    static func downloadURL(_ photo: StoredPhoto, base: String, edge: Int? = nil, format: Format? = nil) -> String {
        let path = photo.key.split(separator: "/").map { String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }
        return "\(base)/media/\(path.joined(separator: "/"))?v=\(version(photo))&token=\(photo.token)" + (edge.map { "&size=\($0)" } ?? "")
            + (format.map { "&format=\($0.rawValue)" } ?? "")
    }

    /// A thumbnail's formats.
    enum Format: String {
        case jpeg, webp
    }

    /// The format a thumbnail is served in: the one asked for (`format`; nil for one we do not have), else WebP when
    /// `Accept` names `image/webp` (with a q above 0: `image/*` and `*/*` do not count, a client that lists nothing
    /// gets JPEG), else JPEG. Whether a WebP exists is the record's to say (`served`).
    static func format(asked: String?, accept: String?) -> (format: Format, asked: Bool)? {
        if let asked { return Format(rawValue: asked).map { ($0, true) } }
        // Most requests say nothing of WebP (and a photo's are never asked): no parsing for them.
        guard let accept, accept.utf8.count >= 10, accept.contains("image/webp") else { return (.jpeg, false) }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "image/webp" else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (q > 0 ? .webp : .jpeg, false)
        }
        return (.jpeg, false)
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
            guard size == nil || edge != nil, let format = Self.format(asked: query.format, accept: edge == nil ? nil : request.headers[.accept]),
                let path = try? StoragePath(key: key), let found = try await photos.media(key, edge: edge)
            else {
                return Self.notFound
            }
            if let token = query.token {
                guard let granted = Self.granted(found, key: key, edge: edge, format: format, version: query.version, token: token) else {
                    return Self.notFound
                }
                (photo, cacheControl) = (granted, Self.immutable)
            } else {
                guard case .success(let caller) = context.identity, try await photos.mayRead(caller: caller.id, path),
                    let readable = Self.served(found, key: key, edge: edge, format: format)
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
            let format = Self.format(asked: query.format, accept: edge == nil ? nil : request.headerFields[.accept]),
            let key = Self.percentDecoded(target.utf8[..<(question ?? target.utf8.endIndex)].dropFirst("/media/".count)),
            (try? StoragePath(key: key)) != nil,  // as `serve`: Swift's == equates look-alikes (K and KELVIN SIGN)
            let found = photos.remembered(key, edge: edge),
            let photo = Self.granted(found, key: key, edge: edge, format: format, version: query.version, token: token)
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
    static func granted(
        _ found: StoredPhotos.Media, key: String, edge: Int?, format: (format: Format, asked: Bool) = (.jpeg, false), version: String?, token: String
    ) -> StoredPhoto? {
        guard same(token, found.photo.token), isVersion(version, of: found.photo) else { return nil }
        return served(found, key: key, edge: edge, format: format)
    }

    /// The object a reader is served: the photo, or with `edge` its thumbnail (nil when it has none) — its WebP for
    /// `format` webp when it has one (when it has none: nil if asked for by `format=webp`, the JPEG if only accepted).
    static func served(_ found: StoredPhotos.Media, key: String, edge: Int?, format: (format: Format, asked: Bool) = (.jpeg, false)) -> StoredPhoto? {
        guard edge != nil else { return format.asked && format.format == .webp ? nil : found.photo }
        guard let thumbnail = found.object else { return nil }
        var photo = found.photo
        if format.format == .webp, let location = thumbnail.webpLocation, let sha256 = thumbnail.webpSha256, let size = thumbnail.webpSize {
            photo.location = location
            photo.sha256 = sha256
            photo.size = size
            photo.key = Thumbnail.webpKey(of: key, edge: thumbnail.edge)
            return photo
        }
        if format.format == .webp && format.asked { return nil }
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

    /// Compares a token in constant time (as long as the lengths match).
    static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static let nosniff = HTTPField.Name("X-Content-Type-Options")!
    /// Sent on every answer, so that nothing followed from a photo (a redirect, a page it is opened in) carries its URL and token on.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static var notFound: Response {
        var response = Problem(.notFound, "not-found", "no such photo").response
        response.headers[referrerPolicy] = "no-referrer"
        return response
    }
}
