import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoFiles

/// The page people use in a browser: `GET /` (and `/index.html`) and its files under `/web/` — plain
/// HTML, CSS and JavaScript modules kept in `Web/Static/` and shipped with the binary (no build step),
/// read once at start. Every answer carries a strict `Content-Security-Policy`: scripts, styles and API
/// calls only from this server, images only from it and from the storage it redirects to, no inline
/// script, never framed.
struct WebPage: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
    }

    let files: [String: File]
    let headers: HTTPFields

    /// `imageOrigins`: where photos may come from besides this server (an S3 endpoint that presigned
    /// redirects go to).
    init(imageOrigins: [String]) throws {
        guard let folder = Bundle.module.url(forResource: "Static", withExtension: nil) else {
            throw WebPageError(message: "the web page's files are missing from the build (Static/)")
        }
        var files: [String: File] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            guard let type = Self.types[(name as NSString).pathExtension] else { continue }
            let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
            files[name] = File(bytes: ByteBuffer(bytes: bytes), contentType: type, etag: "\"\(hex(SHA256.hash(data: bytes)))\"")
        }
        self.files = files
        // data: for the placeholders the page draws (`placeholder.js`) while photos load.
        let images = (["'self'", "data:"] + imageOrigins).joined(separator: " ")
        headers = [
            Self.contentSecurityPolicy:
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images); connect-src 'self'; "
                + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            Self.frameOptions: "DENY",
            MediaRoutes.nosniff: "nosniff",
            MediaRoutes.referrerPolicy: "no-referrer",
            .cacheControl: "no-cache",
        ]
    }

    func register(on router: some RouterMethods<ServerContext>) {
        router.get("/") { request, _ in answer("index.html", request) }
        router.get("/index.html") { request, _ in answer("index.html", request) }
        router.get("/web/:file") { request, context in answer(context.parameters.get("file") ?? "", request) }
    }

    private func answer(_ name: String, _ request: Request) -> Response {
        guard let file = files[name] else { return Problem(.notFound, "not-found", "no such page").response }
        var headers = self.headers
        headers[.contentType] = file.contentType
        headers[.eTag] = file.etag
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.bytes))
    }

    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml",
    ]
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let frameOptions = HTTPField.Name("X-Frame-Options")!
}
