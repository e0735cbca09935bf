import Foundation
import HTTPTypes
import PhotoPrep
import PhotoServices

/// How a request for a stored photo is answered — its conditional, range and redirect headers — decided before any byte
/// is read.
extension MediaRoutes {
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
            HTTPField(name: Self.referrerPolicy, value: "no-referrer"),
        ]
        // A thumbnail's URL answers JPEG or WebP by `Accept`: caches must keep the two apart.
        let thumbnail = photo.key.hasPrefix(Thumbnail.folder + "/")
        if varyOrigin || thumbnail {
            fields.append(HTTPField(name: .vary, value: [thumbnail ? "Accept" : nil, varyOrigin ? "Origin" : nil].compactMap { $0 }.joined(separator: ", ")))
        }
        if Self.notModified(asked, etag: etag, storedAt: photo.storedAt) { return .headers(.notModified, HTTPFields(fields)) }
        guard inStore else {
            guard case .redirect(let presigned) = read else { return .notFound }
            fields.append(HTTPField(name: .location, value: presigned.absoluteString))
            return .headers(.temporaryRedirect, HTTPFields(fields))
        }
        fields.append(HTTPField(name: .contentType, value: photo.key.hasPrefix(Thumbnail.folder + "/webp/") ? "image/webp" : "image/jpeg"))
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
}
