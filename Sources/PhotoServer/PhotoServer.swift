import Foundation
import SQLKit
import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import NIOPosix
import PhotoServices
import PhotoFiles
import PhotoPrep
import PhotoUpload
import ServiceLifecycle
import UnixSignals

/// `photoprep serve`: the server apps upload photos to. A tus 1.0 endpoint at `/files/` that verifies
/// JWTs, enforces the storage rules itself (the client is never trusted), checks the type from the
/// bytes, and normalises every photo on arrival before it is stored and recorded; `/health` and
/// `/metrics` (Prometheus). With a certificate, HTTPS and HTTP/2 (the certificate read again on SIGHUP).
/// Runs as swift-service-lifecycle services: SIGTERM or SIGINT stop accepting, let requests in flight end
/// at a resumable point, and return.
///
/// ```swift
/// let server = try await PhotoServer(configuration: .init(data: folder, keys: .sharedSecret(secret)), logger: logger)
/// try await server.run()
/// ```
public struct PhotoServer: Sendable {
    let configuration: Configuration
    let logger: Logger
    let uploads: UploadHandler
    let authenticator: Authenticator
    let metrics: ServerMetrics
    let database: AppDatabase
    let services: PhotoServices
    /// Where stored photos live: built once, shared by the intake, the jobs, the media routes and the sweeper.
    let storage: any PhotoStorage
    /// The database's and the storage's last probes, for `/health/ready`.
    let readiness: Readiness
    let cpu: NIOThreadPool
    let io: NIOThreadPool
    let resumable: ResumableUploadRoutes
    let webPage: WebPage
    let certificate: ServerCertificate?

    public init(configuration: Configuration, logger: Logger) async throws {
        self.configuration = configuration
        self.logger = logger
        certificate = try configuration.tls.map { try ServerCertificate(files: $0) }
        // Every request ends: a PostgreSQL statement that has not answered in 10 s is failed (503).
        let database = try await AppDatabase.open(
            configuration.database ?? configuration.data.appendingPathComponent("app.sqlite").path, role: .server, deadline: .seconds(10),
            also: UploadSchema.migrations)
        let storage = try openPhotoStorage(
            configuration.storage ?? configuration.data.appendingPathComponent("storage").absoluteString, environment: configuration.environment)
        let authenticator = try await Authenticator(
            keys: configuration.keys, issuer: configuration.issuer, audience: configuration.audience, requireAuthTime: configuration.requireAuthTime,
            logger: logger)
        let threads = max(1, configuration.pipelineThreads)
        let memory = configuration.pipelineMemory > 0 ? MemoryBudget(bytes: configuration.pipelineMemory, slots: threads) : nil
        let cpu = NIOThreadPool(numberOfThreads: threads)
        let io = NIOThreadPool(numberOfThreads: 4)
        let metrics = ServerMetrics()
        // One intake for every way a photo arrives (an upload, a photo job), with the server's limits.
        let intake = PhotoIntake(
            database: database, destination: .storage(storage), cpu: cpu, memory: memory,
            thumbnails: configuration.thumbnails, maxPixels: configuration.maxPixels, quality: configuration.quality,
            keepsCaptureTime: configuration.keepsCaptureTime, webpThumbnails: configuration.webpThumbnails, quota: configuration.quota,
            reviewer: configuration.reviewHook.map { HookReviewer(hook: $0, metrics: metrics, logger: logger) })
        uploads = UploadHandler(
            store: try Self.partialUploads(configuration, database: database, io: io),
            processor: ArrivalProcessor(intake: intake, metrics: metrics, admission: Admission(capacity: threads + max(0, configuration.maxWaitingPhotos))),
            metrics: metrics, expiry: configuration.uploadExpiry, maxUnfinishedPerUser: configuration.maxUnfinishedUploadsPerUser,
            stopping: ShutdownSignal(endProcessAfter: configuration.shutdownGrace + Self.cancellationBound, logger: logger),
            pace: BodyPace(grace: configuration.bodyGrace, minRate: max(0, configuration.minBodyRate)),
            finishing: FinishDeadline(bound: configuration.finishTimeout), hook: configuration.creationHook, logger: logger)
        self.authenticator = authenticator
        self.metrics = metrics
        self.database = database
        services = PhotoServices(database: database, intake: intake, stateFolder: configuration.data.appendingPathComponent("state"), lease: configuration.jobLease)
        self.storage = storage
        readiness = Readiness(database: database, storage: storage, logger: logger)
        self.cpu = cpu
        self.io = io
        let address = Self.address(configuration)
        resumable = ResumableUploadRoutes(uploads: uploads, address: address, links: DownloadLinks(photos: StoredPhotos(database: database, lifetime: configuration.recordsLifetime), address: address, admins: configuration.admins))
        // The page shows photos from this server, and from the bucket its presigned redirects lead to.
        var bucket: String?
        if case .redirect(let url) = storage.read(key: "origin", location: ""), let scheme = url.scheme, let host = url.host {
            bucket = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        }
        webPage = try WebPage(imageOrigins: bucket.map { [$0] } ?? [])
    }

    /// Where uploads in progress are kept: with PostgreSQL and an `s3://` storage — the deployment on
    /// several machines — in the shared database and bucket, so that any instance continues any upload;
    /// otherwise in the data folder. One bucket request may take 20 s, as the photos' own (`BucketStorage`): a bucket
    /// that stops answering fails the request that waits on it (503) instead of holding it for minutes.
    static func partialUploads(_ configuration: Configuration, database: AppDatabase, io: NIOThreadPool) throws -> any PartialUploadStore {
        let folder = configuration.data.appendingPathComponent("uploads")
        guard database.kind == .postgres, let storage = configuration.storage, storage.hasPrefix("s3://") else {
            return try LocalUploadStore(folder: folder, io: io)
        }
        let bucket = try S3Store(url: storage, environment: configuration.environment ?? ProcessInfo.processInfo.environment)
        return try SharedUploadStore(database: database, objects: S3Objects(store: bucket, timeout: .seconds(20)), folder: folder, io: io, lease: configuration.jobLease)
    }

    /// What answers requests: the stored photos (`/media/`) and every route, behind the same middleware.
    func responder(media: MediaRoutes? = nil) -> ServerResponder {
        let log = RequestLogMiddleware(metrics: metrics)
        let cors = CrossOrigin(allowed: Set(configuration.corsOrigins))
        let authentication = BearerAuthentication(authenticator: authenticator)
        return ServerResponder(
            routes: router(log: log, cors: cors, authentication: authentication).buildResponder(), log: log, cors: cors,
            authentication: authentication, media: media ?? self.media())
    }

    /// The stored photos' read path; `responder` and `MediaOnEventLoop` share one, and its memory.
    func media() -> MediaRoutes {
        MediaRoutes(photos: StoredPhotos(database: database, lifetime: configuration.recordsLifetime), storage: storage, varyOrigin: !configuration.corsOrigins.isEmpty)
    }

    /// Every route: `/health`, `/metrics`, tus at `/files/`, the IETF draft at `/uploads/`, the API at
    /// `/v1/`, the web page at `/`; the request log, CORS, authentication and the abuse limits as middleware;
    /// 405 with `Allow` for a method a path does not have (`AllowingRouter`).
    func router(log: RequestLogMiddleware, cors: CrossOrigin, authentication: BearerAuthentication) -> Router<ServerContext> {
        let routes = Router(context: ServerContext.self, options: .autoGenerateHeadEndpoints)
        let router = AllowingRouter(routes)
        let address = Self.address(configuration)
        router.add(middleware: log)
        router.add(middleware: cors)
        router.add(middleware: authentication)
        router.add(
            middleware: AbuseLimits(
                perUser: configuration.writesPerUser, perAddress: configuration.writesPerAddress, trustedProxies: configuration.trustedProxies,
                metrics: metrics))
        HealthRoutes(readiness: readiness).register(on: router)
        router.get("/metrics") { [metrics] _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        TusRoutes(uploads: uploads, address: address).register(on: router)
        resumable.register(on: router)
        APIRoutes(
            services: services, photos: StoredPhotos(database: database, lifetime: configuration.recordsLifetime), store: uploads.store, address: address,
            metrics: metrics, admins: configuration.admins).register(on: router)
        webPage.register(on: router)
        router.answered("/media/**", [.get, .head])
        router.answerOtherMethods()
        return routes
    }

    /// The connections' event loops: one per core the process may run on. NIO's default counts the
    /// machine's cores, and two loops on one core (`taskset`, a container's cpuset) hold each other's
    /// requests for a time slice: a thumbnail's p99 doubled (`Benchmarks/serving.sh`).
    static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: eventLoopCount)
    public static var eventLoopCount: Int { UsableCores.count }

    /// The URL clients reach the server at, without a trailing slash (nil: each request's `Host`, over
    /// https when the server speaks TLS).
    static func address(_ configuration: Configuration) -> PublicAddress {
        PublicAddress(
            publicURL: configuration.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
            scheme: configuration.tls == nil ? "http" : "https")
    }

    /// After the shutdown grace, how long cancelled work may take to end before the process is ended (`ShutdownSignal`).
    static let cancellationBound = Duration.seconds(5)

    /// Serves until SIGTERM or SIGINT (or the task is cancelled): at most `shutdownGrace` plus `cancellationBound` after
    /// the signal. `onRunning` gets the bound port (useful with port 0).
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        cpu.start()
        io.start()
        let media = media()
        let app = Application(
            responder: responder(media: media),
            server: Self.server(
                certificate: certificate, handshakeTimeout: configuration.tlsHandshakeTimeout, idleTimeout: configuration.idleTimeout,
                connections: ConnectionCap(limit: configuration.maxConnectionsPerAddress, exempt: configuration.trustedProxies, metrics: metrics),
                fromMemory: { [idle = configuration.idleTimeout] in
                    MediaOnEventLoop(media: media, metrics: metrics, logger: logger, stallTimeout: TimeAmount(idle))
                }),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "photoprep"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(Self.eventLoops),
            logger: logger)
        let sweeper = UploadSweeper(uploads: uploads, interval: configuration.sweepInterval, logger: logger)
        let authenticator = self.authenticator
        var reloads = [FileReloader.Reload(what: "key files", otherwise: "the keys stay as they were") { try await authenticator.reloadFiles() }]
        if let certificate {
            reloads.append(.init(what: "TLS certificate", otherwise: "the one in use stays") { try certificate.reload() })
        }
        await readiness.probe()  // answered before the first request can ask
        var settings = ServiceGroupConfiguration(
            services: [
                .init(service: app), .init(service: sweeper), .init(service: readiness),
                .init(service: PhotoJobRunner(jobs: services.jobs, mode: .continuous(every: configuration.jobInterval))),
                .init(service: EventDeliveryService(
                    outbox: Outbox(database: database), receiver: configuration.eventReceiver, policy: configuration.eventDelivery,
                    // An attempt ends (its timeout) well before its lease: no other instance sends an event while one still may.
                    lease: max(configuration.jobLease, (configuration.eventReceiver?.timeout ?? .zero) * 2), interval: configuration.eventInterval, keep: configuration.eventsKept, logger: logger,
                    observe: { [metrics] in metrics.events($0) })),
                .init(service: FileReloader(reloads: reloads, logger: logger)),
            ] + authenticator.remote.map { .init(service: $0) }
                // Last: graceful shutdown ends the services from the last one, each after the one before it has ended.
                + [.init(service: uploads.stopping)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            cancellationSignals: [],
            logger: logger)
        settings.maximumGracefulShutdownDuration = configuration.shutdownGrace  // then cancelled; ended by `uploads.stopping`
        let group = ServiceGroup(configuration: settings)
        do {
            try await group.run()
        } catch {
            try? await cpu.shutdownGracefully()
            try? await io.shutdownGracefully()
            throw error
        }
        try? await cpu.shutdownGracefully()
        try? await io.shutdownGracefully()
    }
}
