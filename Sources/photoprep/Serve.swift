import ArgumentParser
import Foundation
import Logging
import PhotoServer

/// `photoprep serve`: the photo server apps upload to (see `PhotoServer`).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the photo server: tus uploads at /files/, storage rules enforced, every photo normalised on arrival.",
        discussion: """
            Clients send 'Authorization: Bearer <JWT>'. HS256 tokens are verified with the secret in
            PHOTOPREP_JWT_SECRET (at least 32 bytes); with --jwks, RS256/ES256 tokens against that key set
            (what Firebase Auth or any OpenID Connect provider publishes). 'sub' is the user id; 'exp' is required.

            The upload key (Upload-Metadata 'key') is the storage path: group_photos/{groupId}/photo.jpg (the
            group's admins), profile_images/{userId}/{file} and user_photos/{userId}/{album}/{file} (that user).
            Also: GET /health, GET /metrics (Prometheus). SIGTERM or SIGINT stop it gracefully.
            """)

    @Option(help: "The services' folder: app.sqlite, the local store storage/, uploads in progress uploads/.")
    var data: String = "photoprep-data"

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port, printed when listening).")
    var port: Int = 8080

    @Option(help: "Where normalised photos are stored: s3://bucket/prefix (settings from AWS_* variables) or a folder. Default: DATA/storage.")
    var to: String?

    @Option(help: "Verify RS256/ES256 tokens against this JWKS file instead of the HS256 secret.")
    var jwks: String?

    @Option(help: "Required 'iss' of tokens.")
    var issuer: String?

    @Option(help: "Required 'aud' of tokens.")
    var audience: String?

    @Option(help: "Unfinished uploads are deleted this many seconds after creation.")
    var uploadExpiry: Double = 24 * 3600

    @Option(help: "Seconds between looks for expired uploads.")
    var sweepSeconds: Double = 60

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default: LOG_LEVEL, else info).")
    var logLevel: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let keys: Authenticator.Keys
        if let jwks {
            guard let json = try? String(contentsOfFile: jwks, encoding: .utf8) else { throw CommandFailure(message: "\(jwks): cannot read the JWKS file") }
            keys = .jwks(json)
        } else if let secret = environment["PHOTOPREP_JWT_SECRET"], !secret.isEmpty {
            keys = .sharedSecret(secret)
        } else {
            throw CommandFailure(message: "no token keys: set PHOTOPREP_JWT_SECRET (HS256, at least 32 bytes) or pass --jwks FILE")
        }
        guard let level = Logger.Level(rawValue: logLevel ?? environment["LOG_LEVEL"] ?? "info") else {
            throw ValidationError("--log-level: one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = PhotoServer.Configuration(data: URL(fileURLWithPath: data), keys: keys)
        configuration.host = host
        configuration.port = port
        configuration.storage = to.map { $0.contains("://") ? $0 : URL(fileURLWithPath: $0).absoluteString }
        configuration.issuer = issuer
        configuration.audience = audience
        configuration.uploadExpiry = uploadExpiry
        configuration.sweepInterval = .milliseconds(Int(sweepSeconds * 1000))
        let server: PhotoServer
        do {
            server = try await PhotoServer(configuration: configuration, logger: Logger(label: "photoprep.serve"))
        } catch {
            throw CommandFailure(message: "cannot start the server: \(error)")
        }
        let host = self.host
        try await server.run { port in
            FileHandle.standardOutput.write(Data("photoprep serve: listening on http://\(host):\(port) (data: \(data))\n".utf8))
        }
        FileHandle.standardOutput.write(Data("photoprep serve: stopped\n".utf8))
    }
}
