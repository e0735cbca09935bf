import ArgumentParser
import PhotoBatch
import Foundation
import Logging
import NIOCore
import PhotoServer
import PhotoServices
import PhotoPrep

/// `photoprep serve`: the photo server apps upload to (see `PhotoServer`).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the photo server: tus uploads at /files/, storage rules enforced, every photo normalised on arrival.",
        discussion: """
            Clients send 'Authorization: Bearer <JWT>'. HS256 tokens are verified with the secret in
            PHOTOPREP_JWT_SECRET (at least 32 bytes); with --jwks, RS256/ES256 tokens against that key set
            (what Firebase Auth or any OpenID Connect provider publishes). 'sub' is the user id; 'exp' is required.

            The upload key (Upload-Metadata 'key') is the storage path: group_photos/{groupId}/photo.jpg (the
            group's admins), profile_images/{userId}/{file} and user_photos/{userId}/{album}/{file} (that user).
            Also: GET /health, GET /metrics (Prometheus). SIGTERM or SIGINT stop it gracefully.
            """)

    @Option(help: "The services' folder: app.sqlite, the local store storage/, uploads in progress uploads/ (env PHOTOPREP_DATA; default photoprep-data).")
    var data: String?

    @Option(help: ArgumentHelp(
        "The services' database: a postgres:// URL, shared by every instance behind a load balancer (with an s3:// --to, uploads in progress are shared too), or an SQLite file (env PHOTOPREP_DATABASE; default DATA/app.sqlite).",
        valueName: "url-or-file"))
    var database: String?

    @Option(help: ArgumentHelp("Seconds a photo job, or the finishing of an upload, stays with this instance unless renewed: how long until another instance takes over a dead one's.", visibility: .hidden))
    var jobLease: Double = 30

    @Option(help: "Address to listen on (env PHOTOPREP_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on, 0 for any free one (printed when listening) (env PHOTOPREP_PORT; default 8080).")
    var port: Int?

    @Option(help: "The URL clients reach the server at behind a proxy, e.g. https://uploads.example.com; upload locations are built on it (env PHOTOPREP_PUBLIC_URL; default: each request's Host).")
    var publicURL: String?

    @Option(help: "Where normalised photos are stored: s3://bucket/prefix (settings from AWS_* variables) or a folder (env PHOTOPREP_STORAGE; default DATA/storage).")
    var to: String?

    @Option(help: ArgumentHelp(
        "Verify RS256/ES256 tokens against this JWKS: a file (read again on SIGHUP), or an https:// URL kept current as its Cache-Control says and fetched again when a token names a new key (at most once a minute); repeatable (env PHOTOPREP_JWKS).",
        valueName: "file-or-url"))
    var jwks: [String] = []

    @Option(help: ArgumentHelp(
        "An OpenID Connect provider's issuer URL: its keys from {issuer}/.well-known/openid-configuration, tokens only from that issuer (env PHOTOPREP_OIDC_ISSUER).",
        valueName: "url"))
    var oidcIssuer: String?

    @Option(help: ArgumentHelp(
        "Firebase ID tokens of this Firebase project: Google's securetoken keys, issuer https://securetoken.google.com/ID, audience ID, auth_time checked (env PHOTOPREP_FIREBASE_PROJECT).",
        valueName: "id"))
    var firebaseProject: String?

    @Option(help: "Required 'iss' of tokens (env PHOTOPREP_JWT_ISSUER).")
    var issuer: String?

    @Option(help: "Required 'aud' of tokens (env PHOTOPREP_JWT_AUDIENCE).")
    var audience: String?

    @Option(help: "Unfinished uploads are deleted this many seconds after creation (env PHOTOPREP_UPLOAD_EXPIRY; default 86400).")
    var uploadExpiry: Double?

    @Option(help: "Thumbnails made with every group photo and profile picture: squares' sides (long edges with --square-avatars off) in pixels, comma-separated, or none (default 128,256).")
    var avatarThumbnails = "128,256"

    @Option(help: ArgumentHelp(
        "on: avatar thumbnails are squares cut from the photo, centred on the focal point the client sends (tus metadata focus, or PUT …/photo/focus), else on what libvips' attention rule picks, else the centre; off: long-edge fits (env PHOTOPREP_SQUARE_AVATARS; default on).",
        valueName: "on|off"))
    var squareAvatars: String?

    @Option(help: "Thumbnails made with every album photo: long edges in pixels, comma-separated, or none (default 512).")
    var albumThumbnails = "512"

    @Option(help: ArgumentHelp(
        "What photos arriving are encoded for: good (SSIMULACRA2 75), high (85: looks the same in a flip test), visually-lossless (90), score:N, a libjpeg quality 1-100, or max (the highest under each path's byte budget) (env PHOTOPREP_QUALITY; default high).",
        valueName: "target"))
    var quality: QualityTarget?

    @Option(help: ArgumentHelp(
        "keep: each photo's capture time (EXIF DateTimeOriginal with its offset) is recorded and shown as takenAt, albums listed by it; drop: it is not (env PHOTOPREP_CAPTURE_TIME; default keep). Stored files never carry it.",
        valueName: "keep|drop"))
    var captureTime: String?

    @Option(help: ArgumentHelp(
        "on: each thumbnail is also made as WebP on arrival, kept when it reaches the JPEG's SSIMULACRA2 score in fewer bytes, served to clients that accept image/webp; off: JPEG only (env PHOTOPREP_WEBP_THUMBNAILS; default on).",
        valueName: "on|off"))
    var webpThumbnails: String?

    @Option(help: ArgumentHelp(
        "A web origin whose pages may call the server (CORS), e.g. https://app.example.com, or * for any; repeatable (env PHOTOPREP_CORS_ORIGINS, comma-separated; default none).",
        valueName: "origin"))
    var corsOrigin: [String] = []

    @OptionGroup var limits: LimitOptions

    @OptionGroup var hooks: HookOptions

    @OptionGroup var events: EventOptions

    @Option(help: ArgumentHelp(
        "Serve HTTPS with this certificate (PEM, the chain leaf first; with --tls-key), read again on SIGHUP; HTTP/2 to clients that offer it (env PHOTOPREP_TLS_CERT; default: plain HTTP, e.g. behind a proxy).",
        valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key of --tls-cert (PEM, unencrypted), read again on SIGHUP (env PHOTOPREP_TLS_KEY).", valueName: "file"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("Seconds a connection has to complete its TLS handshake before it is closed.", visibility: .hidden))
    var tlsHandshakeTimeout: Double = 30

    @Option(help: "Seconds between looks for expired uploads.")
    var sweepSeconds: Double = 60

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default: LOG_LEVEL, else info).")
    var logLevel: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // Flags win; then the environment (how containers and service managers configure); then the defaults.
        func setting(_ flag: String?, _ name: String) -> String? { flag ?? environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let data = setting(self.data, "PHOTOPREP_DATA") ?? "photoprep-data"
        let host = setting(self.host, "PHOTOPREP_HOST") ?? "127.0.0.1"
        guard let port = setting(port.map(String.init), "PHOTOPREP_PORT").map({ Int($0) }) ?? 8080, (0...65535).contains(port) else {
            throw ValidationError("\(self.port != nil ? "--port" : "PHOTOPREP_PORT"): not a port number (0–65535)")
        }
        guard let uploadExpiry = setting(uploadExpiry.map { String($0) }, "PHOTOPREP_UPLOAD_EXPIRY").map({ Double($0) }) ?? 86400, uploadExpiry > 0 else {
            throw ValidationError("\(self.uploadExpiry != nil ? "--upload-expiry" : "PHOTOPREP_UPLOAD_EXPIRY"): not a number of seconds")
        }
        let to = setting(self.to, "PHOTOPREP_STORAGE")
        var keys: [Authenticator.Keys] = []
        var issuer = setting(issuer, "PHOTOPREP_JWT_ISSUER")
        var audience = setting(audience, "PHOTOPREP_JWT_AUDIENCE")
        for source in jwks.isEmpty ? setting(nil, "PHOTOPREP_JWKS").map { [$0] } ?? [] : jwks {
            if source.hasPrefix("https://") || source.hasPrefix("http://") {
                guard let url = URL(string: source) else { throw ValidationError("--jwks \(source): not a URL") }
                keys.append(.jwksURL(url))
            } else {
                keys.append(.jwksFile(source))
            }
        }
        if let provider = setting(oidcIssuer, "PHOTOPREP_OIDC_ISSUER") {
            guard let url = URL(string: provider) else { throw ValidationError("--oidc-issuer \(provider): not a URL") }
            keys.append(.openIDProvider(url))
        }
        var requireAuthTime = false
        if let project = setting(firebaseProject, "PHOTOPREP_FIREBASE_PROJECT") {
            // Google's keys for Firebase ID tokens; PHOTOPREP_FIREBASE_JWKS_URL replaces them (a mirror, the tests).
            let address = environment["PHOTOPREP_FIREBASE_JWKS_URL"] ?? "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
            guard let url = URL(string: address) else { throw ValidationError("PHOTOPREP_FIREBASE_JWKS_URL: not a URL") }
            keys.append(.jwksURL(url))
            guard issuer == nil || issuer == "https://securetoken.google.com/\(project)", audience == nil || audience == project else {
                throw ValidationError("--firebase-project sets the issuer and audience itself")
            }
            issuer = "https://securetoken.google.com/\(project)"
            audience = project
            requireAuthTime = true
        }
        // The shared secret only when no identity provider's keys are configured: with them, HS256 tokens
        // are never accepted (a stray secret in the environment must not open a second way in).
        if keys.isEmpty, let secret = environment["PHOTOPREP_JWT_SECRET"], !secret.isEmpty {
            keys.append(.sharedSecret(secret))
        }
        guard !keys.isEmpty else {
            throw CommandFailure(message: "no token keys: set PHOTOPREP_JWT_SECRET (HS256, at least 32 bytes), or pass --jwks FILE-OR-URL, --oidc-issuer URL or --firebase-project ID")
        }
        guard let level = Logger.Level(rawValue: logLevel ?? environment["LOG_LEVEL"] ?? "info") else {
            throw ValidationError("--log-level: one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: level) }
        if audience == nil, keys.contains(where: { if case .sharedSecret = $0 { false } else { true } }) {
            // A provider's keys sign tokens for every application it serves: without an audience, one issued to
            // another application (another Firebase project on Google's shared keys) would be taken here.
            Logger(label: "photoprep.serve").warning(
                "no --audience: every token the identity provider's keys verify is accepted, whatever application it was issued for")
        }
        var configuration = PhotoServer.Configuration(data: URL(fileURLWithPath: data), keys: keys[0])
        configuration.keys = keys
        configuration.host = host
        configuration.database = setting(database, "PHOTOPREP_DATABASE")
        configuration.jobLease = .milliseconds(Int(max(jobLease, 0.5) * 1000))
        configuration.jobInterval = min(configuration.jobInterval, configuration.jobLease / 2)
        configuration.port = port
        configuration.storage = to.map { $0.contains("://") ? $0 : URL(fileURLWithPath: $0).absoluteString }
        if let publicURL = setting(publicURL, "PHOTOPREP_PUBLIC_URL") {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.query == nil else {
                throw ValidationError("--public-url: an http(s) URL without a query, e.g. https://uploads.example.com")
            }
            configuration.publicURL = publicURL
        }
        configuration.issuer = issuer
        configuration.audience = audience
        configuration.requireAuthTime = requireAuthTime
        /// A two-way setting (`on`/`off`, `keep`/`drop`): true for `yes` (the default), false for `no`, else refused.
        func choice(_ flag: String?, _ name: String, option: String, yes: String = "on", no: String = "off") throws -> Bool {
            switch setting(flag, name) ?? yes {
            case yes: return true
            case no: return false
            case let other: throw ValidationError("\(option) \(other): \(yes) or \(no)")
            }
        }
        let square = try choice(squareAvatars, "PHOTOPREP_SQUARE_AVATARS", option: "--square-avatars")
        configuration.thumbnails = ThumbnailSizes(
            avatar: try Self.edges(avatarThumbnails, "--avatar-thumbnails"), album: try Self.edges(albumThumbnails, "--album-thumbnails"), squareAvatars: square)
        configuration.uploadExpiry = uploadExpiry
        if let quality = quality ?? environment["PHOTOPREP_QUALITY"].map({ QualityTarget($0) }) ?? nil {
            configuration.quality = quality
        } else if let text = environment["PHOTOPREP_QUALITY"] {
            throw ValidationError("PHOTOPREP_QUALITY \(text): good, high, visually-lossless, score:N, a quality 1-100, or max")
        }
        configuration.keepsCaptureTime = try choice(captureTime, "PHOTOPREP_CAPTURE_TIME", option: "--capture-time", yes: "keep", no: "drop")
        configuration.webpThumbnails = try choice(webpThumbnails, "PHOTOPREP_WEBP_THUMBNAILS", option: "--webp-thumbnails")
        let origins = corsOrigin.isEmpty ? (environment["PHOTOPREP_CORS_ORIGINS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : corsOrigin
        for origin in origins where origin != "*" {
            guard let url = URL(string: origin), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.path.isEmpty, url.query == nil else {
                throw ValidationError("--cors-origin \(origin): an origin is scheme://host[:port] with nothing after, e.g. https://app.example.com, or *")
            }
        }
        configuration.corsOrigins = origins.filter { !$0.isEmpty }
        try limits.apply(to: &configuration, environment: environment)
        configuration.creationHook = try hooks.hook(setting)
        configuration.reviewHook = try hooks.review(setting)
        try events.apply(to: &configuration, setting)
        configuration.sweepInterval = .milliseconds(Int(sweepSeconds * 1000))
        configuration.tlsHandshakeTimeout = .milliseconds(Int(max(tlsHandshakeTimeout, 0.1) * 1000))
        configuration.tls = try Self.tls(certificate: setting(tlsCert, "PHOTOPREP_TLS_CERT"), key: setting(tlsKey, "PHOTOPREP_TLS_KEY"))
        let server: PhotoServer
        do {
            server = try await PhotoServer(configuration: configuration, logger: Logger(label: "photoprep.serve"))
        } catch {
            throw CommandFailure(message: "cannot start the server: \(error)")
        }
        let scheme = configuration.tls == nil ? "http" : "https"
        do {
            try await server.run { port in
                StandardStream.output.write("photoprep serve: listening on \(scheme)://\(host):\(port) (data: \(data), event loops: \(PhotoServer.eventLoopCount))\n")
            }
        } catch let error as IOError where [EADDRINUSE, EACCES, EADDRNOTAVAIL].contains(error.errnoCode) {
            // NIO's words name the system call, not the address: say which one could not be listened on, and why.
            throw CommandFailure(message: "cannot listen on \(host):\(port): \(String(cString: strerror(error.errnoCode)))")
        }
        StandardStream.output.write("photoprep serve: stopped\n")
    }

    /// Both files or neither: a certificate without its key (or the reverse) is a mistake, not plain HTTP.
    static func tls(certificate: String?, key: String?) throws -> PhotoServer.TLSFiles? {
        switch (certificate, key) {
        case (let certificate?, let key?): return PhotoServer.TLSFiles(certificate: certificate, key: key)
        case (nil, nil): return nil
        case (_?, nil): throw ValidationError("--tls-cert needs --tls-key (env PHOTOPREP_TLS_KEY): the certificate's private key")
        case (nil, _?): throw ValidationError("--tls-key needs --tls-cert (env PHOTOPREP_TLS_CERT): the certificate it is the key of")
        }
    }

    /// "128,256" → [128, 256]; "none" or "" → []. Each edge 16–4096 px.
    static func edges(_ text: String, _ option: String) throws -> [Int] {
        guard !["", "none"].contains(text.lowercased()) else { return [] }
        return try text.split(separator: ",").map { part in
            guard let edge = Int(part.trimmingCharacters(in: .whitespaces)), (16...4096).contains(edge) else {
                throw ValidationError("\(option): \"\(part)\" is not a long edge of 16–4096 pixels")
            }
            return edge
        }
    }
}
