public import Foundation
public import PhotoPrep
public import PhotoServices

extension PhotoServer {
    public struct Configuration: Sendable {
        /// The services' folder: `app.sqlite`, the local store `storage/`, the uploads in progress `uploads/`.
        public var data: URL
        /// The services' database: a `postgres://` URL (several instances share it) or an SQLite file
        /// (nil: `data/app.sqlite`).
        public var database: String?
        /// How often the photo-job runner looks for jobs to run or take over.
        public var jobInterval: Duration = .seconds(5)
        /// How long a photo job stays with its runner unless renewed.
        public var jobLease: Duration = .seconds(30)
        public var host: String = "127.0.0.1"
        /// The URL clients reach the server at, e.g. `https://uploads.example.com` behind a proxy; upload
        /// locations are built on it (nil: from each request's `Host`).
        public var publicURL: String?
        public var port: Int = 8080
        /// Where normalised photos are stored: a folder (`file://…`) or `s3://bucket/prefix`. nil: `data/storage`.
        public var storage: String?
        /// Where an `s3://` storage finds its endpoint, region and credentials (nil: the process environment).
        public var environment: [String: String]?
        /// Where token signing keys come from: a shared secret, JWKS files, identity providers' URLs.
        public var keys: [Authenticator.Keys]
        public var issuer: String?
        public var audience: String?
        /// Tokens must carry an `auth_time` not in the future (Firebase ID tokens).
        public var requireAuthTime = false
        /// Unfinished uploads are deleted this long after their creation.
        public var uploadExpiry: TimeInterval = 24 * 3600
        /// Unfinished uploads one user may have at once (a quota on the disk a user can hold; 429 past it).
        public var maxUnfinishedUploadsPerUser = 20
        /// The app's backend, asked before each upload is created (nil: nobody).
        public var creationHook: CreationHook?
        /// The app's backend, asked about each prepared photo before it is stored (nil: nobody).
        public var reviewHook: ReviewHook?
        /// Where each change's event is delivered (`EventDeliveryService`); nil: events are recorded and kept for
        /// `eventsKept`, sent nowhere (`photoprep events` lists them).
        public var eventReceiver: EventDeliveryService.Receiver?
        /// How often and how long an event that could not be delivered is tried again.
        public var eventDelivery = EventDelivery()
        /// How long events are kept after they were recorded.
        public var eventsKept: Duration = .seconds(7 * 24 * 3600)
        /// Users who may list and retry the events over the API (`/v1/events`).
        public var admins: Set<String> = []
        /// How often the outbox is looked at for new events when there was nothing to send.
        public var eventInterval: Duration = .milliseconds(250)
        /// What each user may keep stored in their own folders, unless they have a quota of their own (`photoprep user
        /// quota`); nil: no quotas.
        public var quota: StorageQuota? = .standard
        /// How often expired uploads are looked for.
        public var sweepInterval: Duration = .seconds(60)
        /// The thumbnails made with each photo on arrival.
        public var thumbnails = ThumbnailSizes()
        /// Photos prepared at once (default: the number of cores).
        public var pipelineThreads: Int = ProcessInfo.processInfo.activeProcessorCount
        /// The memory the photos being prepared may hold together, by their decodes' estimates (`MemoryBudget`):
        /// a photo waits while the others hold too much. 0: no bound beyond the threads.
        public var pipelineMemory = 192 << 20
        /// On SIGTERM or SIGINT: how long requests in flight may take to end (uploads stop reading at once and
        /// keep what they flushed); then they are cancelled, and after `PhotoServer.cancellationBound` more the
        /// process ends whatever still waits (a database or bucket that never answers). SIGTERM always ends it.
        public var shutdownGrace: Duration = .seconds(8)
        /// Web origins (`https://app.example.com`, or `*`) whose scripts may call the server (CORS); none by default.
        public var corsOrigins: [String] = []
        /// Writes (upload creations, the API's `POST`/`PUT`/`PATCH`/`DELETE`) one signed-in user may make (429 past it).
        public var writesPerUser = RateLimit(perMinute: 120)
        /// Writes from one client address (many users may share one: an office, a carrier's NAT).
        public var writesPerAddress = RateLimit(perMinute: 600)
        /// Proxies whose `X-Forwarded-For` names the client address (none: the connection's peer is the client).
        public var trustedProxies: [AddressRange] = []
        /// The most pixels a photo may declare in its header (width × height); larger ones are refused (422)
        /// before any pixel is decoded. 200 MP phone photos (16,320 × 12,240) fit.
        public var maxPixels = 210_000_000
        /// What arriving photos (and their thumbnails) are encoded for: by default the smallest JPEG scoring SSIMULACRA2
        /// 85 against the resized photo, under the path's byte budget.
        public var quality: QualityTarget = .high
        /// Whether each photo's capture time (its EXIF `DateTimeOriginal` with its offset) is recorded and shown as
        /// `takenAt`; the stored file never carries it either way.
        public var keepsCaptureTime = true
        /// Whether each thumbnail is also made as WebP on arrival, kept when it reaches the JPEG's SSIMULACRA2 score in
        /// fewer bytes, and served to readers that accept it (`Accept: image/webp`, `Vary: Accept`) or ask for it.
        public var webpThumbnails = true
        /// Photos that may wait for the pipeline's threads beyond those being prepared; an upload finishing
        /// past it gets 503 with `Retry-After` and keeps its bytes (asking again finishes it).
        public var maxWaitingPhotos = 128
        /// Bytes a second an upload's body must keep up on average after `bodyGrace` (0: no limit); a slower
        /// request is cut with 408, what arrived kept.
        public var minBodyRate = 500
        /// A connection that completes no request part (headers, a piece of body) for this long is closed.
        public var idleTimeout: Duration = .seconds(60)
        /// Open connections one client address may hold (trusted proxies are not capped; 0: no cap).
        public var maxConnectionsPerAddress = 128
        /// How long an upload's body may take before `minBodyRate` applies.
        public var bodyGrace: Duration = .seconds(20)
        /// How long an upload's last request may take to finish it — gather its bytes, prepare, store and record its
        /// photo — once its body arrived: past it the work is cancelled and the client gets 503 with `Retry-After`,
        /// the bytes kept (`FinishDeadline`).
        public var finishTimeout: Duration = .seconds(30)
        /// How long a stored photo's record, once read, is reused from memory: how long a change another instance
        /// made (a regenerated token, a replaced photo) may take to be seen here. This instance's own are seen at once.
        public var recordsLifetime: Duration = StoredPhotos.Recent.lifetime
        /// The certificate and key to serve HTTPS with (read again on SIGHUP); nil: plain HTTP (behind a
        /// proxy that terminates TLS).
        public var tls: TLSFiles?
        /// A connection whose TLS handshake has not completed by then is closed.
        public var tlsHandshakeTimeout: Duration = .seconds(30)

        public init(data: URL, keys: Authenticator.Keys) {
            self.data = data
            self.keys = [keys]
        }
    }
}
