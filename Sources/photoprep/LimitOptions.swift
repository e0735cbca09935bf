import ArgumentParser
import Foundation
import PhotoServer
import PhotoServices

/// `photoprep serve`'s abuse limits and connection timeouts (README, "Running it in production: abuse limits"):
/// each a flag, else a `PHOTOPREP_*` variable, else the server's default.
struct LimitOptions: ParsableArguments {
    @Option(help: "Writes (upload creations, the API's POST/PUT/PATCH/DELETE) one signed-in user may make a minute, as many at once; 0: no limit (env PHOTOPREP_WRITES_PER_USER; default 120).")
    var writesPerUser: Int?

    @Option(help: "Writes from one client address a minute, as many at once; 0: no limit (env PHOTOPREP_WRITES_PER_ADDRESS; default 600).")
    var writesPerAddress: Int?

    @Option(help: ArgumentHelp(
        "A proxy (address or CIDR range, e.g. 10.0.0.0/8) whose X-Forwarded-For names the client address for the limits; repeatable (env PHOTOPREP_TRUST_PROXY, comma-separated; default none).",
        valueName: "cidr"))
    var trustProxy: [String] = []

    @Option(help: "The most pixels (width × height) a photo may declare; larger ones are refused with 422 before decoding (env PHOTOPREP_MAX_PIXELS; default 210000000: 200 MP phone photos fit).")
    var maxPixels: Int?

    @Option(help: "Bytes each user may keep stored in their own folders (profile pictures and album photos, with their thumbnails), unless `photoprep user quota` gave them a quota of their own; an upload past it is refused with 413; 0: no limit, and with --quota-photos 0 no quotas (env PHOTOPREP_QUOTA_BYTES; default 1073741824: 1 GiB).")
    var quotaBytes: Int?

    @Option(help: "Photos each user may keep stored in their own folders, unless `photoprep user quota` gave them a quota of their own; 0: no limit (env PHOTOPREP_QUOTA_PHOTOS; default 10000).")
    var quotaPhotos: Int?

    @Option(help: "Photos prepared at once, each on a thread of its own (env PHOTOPREP_PIPELINE_THREADS; default: the number of cores).")
    var pipelineThreads: Int?

    @Option(help: ArgumentHelp(
        "MiB the photos being prepared may hold together, by their decodes' estimates from the headers; a photo waits while the others hold too much; 0: no bound beyond the threads (env PHOTOPREP_PIPELINE_MEMORY; default 192).",
        valueName: "mib"))
    var pipelineMemory: Int?

    @Option(help: "Photos that may wait for the pipeline beyond those being prepared; past it an upload's last request gets 503 with Retry-After and keeps its bytes (env PHOTOPREP_MAX_WAITING_PHOTOS; default 128).")
    var maxWaitingPhotos: Int?

    @Option(help: "Bytes a second an upload's body must average after its first 20 s, or it is cut with 408 (what arrived is kept; the client resumes); 0: no limit (env PHOTOPREP_MIN_BODY_RATE; default 500).")
    var minBodyRate: Int?

    @Option(help: "Open connections one client address may hold; one more is closed when accepted (trusted proxies are not capped); 0: no cap (env PHOTOPREP_MAX_CONNECTIONS_PER_ADDRESS; default 128).")
    var maxConnectionsPerAddress: Int?

    @Option(help: ArgumentHelp("Seconds a connection may go without completing a request part (headers, a piece of body).", visibility: .hidden))
    var idleTimeout: Double = 60

    @Option(help: ArgumentHelp("Seconds an upload's body has before --min-body-rate applies.", visibility: .hidden))
    var bodyGrace: Double = 20

    @Option(help: ArgumentHelp("Seconds an upload's last request has to store its photo once its body arrived; then 503 with Retry-After, the bytes kept.", visibility: .hidden))
    var finishTimeout: Double = 30

    @Option(help: ArgumentHelp("Seconds a stored photo's record is reused from memory: how long another instance's change to it may take to be seen here.", visibility: .hidden))
    var recordsLifetime: Double = 1

    @Option(help: "Seconds requests in flight have to end after SIGTERM or SIGINT; then they are cancelled, and 5 s later the process ends whatever still waits (env PHOTOPREP_SHUTDOWN_GRACE; default 8).")
    var shutdownGrace: Int?

    /// Sets what was given; the rest keeps `configuration`'s defaults.
    func apply(to configuration: inout PhotoServer.Configuration, environment: [String: String]) throws {
        func setting(_ flag: String?, _ name: String) -> String? { flag ?? environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        func count(_ flag: Int?, _ name: String, _ option: String, default value: Int, least: Int = 0) throws -> Int {
            guard let text = setting(flag.map(String.init), name) else { return value }
            guard let number = Int(text), number >= least else { throw ValidationError("\(option): \"\(text)\" is not a whole number of at least \(least)") }
            return number
        }
        configuration.writesPerUser = RateLimit(perMinute: try count(writesPerUser, "PHOTOPREP_WRITES_PER_USER", "--writes-per-user", default: configuration.writesPerUser.perMinute))
        configuration.writesPerAddress = RateLimit(perMinute: try count(writesPerAddress, "PHOTOPREP_WRITES_PER_ADDRESS", "--writes-per-address", default: configuration.writesPerAddress.perMinute))
        configuration.maxPixels = try count(maxPixels, "PHOTOPREP_MAX_PIXELS", "--max-pixels", default: configuration.maxPixels, least: 1)
        configuration.maxConnectionsPerAddress = try count(
            maxConnectionsPerAddress, "PHOTOPREP_MAX_CONNECTIONS_PER_ADDRESS", "--max-connections-per-address", default: configuration.maxConnectionsPerAddress)
        configuration.idleTimeout = .milliseconds(Int(max(0.1, idleTimeout) * 1000))
        configuration.bodyGrace = .milliseconds(Int(max(0.1, bodyGrace) * 1000))
        configuration.finishTimeout = .milliseconds(Int(max(0.1, finishTimeout) * 1000))
        configuration.recordsLifetime = .milliseconds(Int(max(0, recordsLifetime) * 1000))
        configuration.shutdownGrace = .seconds(
            try count(shutdownGrace, "PHOTOPREP_SHUTDOWN_GRACE", "--shutdown-grace", default: Int(configuration.shutdownGrace.components.seconds), least: 1))
        configuration.minBodyRate = try count(minBodyRate, "PHOTOPREP_MIN_BODY_RATE", "--min-body-rate", default: configuration.minBodyRate)
        configuration.pipelineThreads = try count(
            pipelineThreads, "PHOTOPREP_PIPELINE_THREADS", "--pipeline-threads", default: configuration.pipelineThreads, least: 1)
        configuration.pipelineMemory = try count(
            pipelineMemory, "PHOTOPREP_PIPELINE_MEMORY", "--pipeline-memory", default: configuration.pipelineMemory >> 20) << 20
        let standard = StorageQuota.standard
        let quota = (
            bytes: try count(quotaBytes, "PHOTOPREP_QUOTA_BYTES", "--quota-bytes", default: Int(standard.bytes)),
            photos: try count(quotaPhotos, "PHOTOPREP_QUOTA_PHOTOS", "--quota-photos", default: Int(standard.photos))
        )
        // 0: no limit of that kind; both 0: no quotas.
        configuration.quota = quota == (0, 0) ? nil : StorageQuota(
            bytes: quota.bytes == 0 ? .max : Int64(quota.bytes), photos: quota.photos == 0 ? .max : Int64(quota.photos))
        configuration.maxWaitingPhotos = try count(maxWaitingPhotos, "PHOTOPREP_MAX_WAITING_PHOTOS", "--max-waiting-photos", default: configuration.maxWaitingPhotos)
        let proxies = trustProxy.isEmpty ? (environment["PHOTOPREP_TRUST_PROXY"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : trustProxy
        configuration.trustedProxies = try proxies.filter { !$0.isEmpty }.map { text in
            guard let range = AddressRange(text) else { throw ValidationError("--trust-proxy \(text): an IPv4 or IPv6 address, or a CIDR range like 10.0.0.0/8") }
            return range
        }
    }
}
