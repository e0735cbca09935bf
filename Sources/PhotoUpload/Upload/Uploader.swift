import AsyncHTTPClient
public import Foundation
import PhotoFiles
import NIOHTTP1
import Synchronization

/// Uploads to one destination: a tus 1.0 server (`http://` or `https://` endpoint), an S3 bucket
/// (`s3://bucket/prefix`), a presigned S3 PUT URL (one object), or a local store folder
/// (`file:///path`, the embedded default).
///
/// ```swift
/// let uploader = try Uploader(destination: "https://uploads.example.com/files/",
///                             journal: UploadJournal(folder: stateFolder))
/// let task = uploader.upload(.file("photo.jpg"), request: UploadRequest(key: "profile_images/u1/photo.jpg",
///                                                                      authorization: "Bearer …"))
/// for await event in task.events { print(event) }
/// ```
public final class Uploader: Sendable {
    public let destination: String
    public let configuration: UploadConfiguration
    public let journal: UploadJournal?
    private let kind: Kind
    /// What the `http(s)://` server speaks and supports, asked once.
    private let server = Mutex<TusClient.ServerInfo?>(nil)

    private enum Kind {
        case tus(URL)
        case local(URL)
        case s3(S3Store)
        case presigned(URL)
    }

    /// `environment`: where an `s3://` destination finds its endpoint, region and credentials
    /// (see `S3Store.init(url:environment:)`); nil: the process environment.
    public init(
        destination: String, configuration: UploadConfiguration = UploadConfiguration(), journal: UploadJournal? = nil,
        environment: [String: String]? = nil
    ) throws(UploadError) {
        self.destination = destination
        self.configuration = configuration
        self.journal = journal
        guard !destination.trimmingCharacters(in: .whitespaces).isEmpty else { throw UploadError(.rejected, "the destination is empty") }
        if destination.hasPrefix("s3://") {
            kind = .s3(try S3Store(url: destination, environment: environment ?? ProcessInfo.processInfo.environment))
        } else if destination.hasPrefix("http://") || destination.hasPrefix("https://") {
            guard let url = URL(string: destination) else { throw UploadError(.rejected, "\(destination): not a valid URL") }
            kind = destination.contains("X-Amz-Signature=") ? .presigned(url) : .tus(url)
        } else if destination.hasPrefix("file://") {
            guard let url = URL(string: destination), url.isFileURL else { throw UploadError(.rejected, "\(destination): not a valid file URL") }
            kind = .local(url.standardizedFileURL)
        } else if destination.contains("://") {
            throw UploadError(.rejected, "\(destination): unsupported destination (use http(s):// for tus, s3:// for S3, or file:// for a folder)")
        } else {
            kind = .local(URL(fileURLWithPath: destination).standardizedFileURL)
        }
    }

    /// Starts uploading `source` under `request.key`; resumes an unfinished upload of the same content
    /// from the journal.
    public func upload(_ source: UploadSource, request: UploadRequest) async -> UploadTask {
        let started = ContinuousClock.now
        // Ask a tus server what it supports while the source is read and hashed.
        async let info = serverInfo(authorization: request.authorization)
        let opened: OpenSource
        do {
            opened = try source.open(hashing: journal != nil)
        } catch {
            _ = await info
            return UploadTask(failed: error)
        }
        let transport: any UploadTransport
        switch kind {
        case .local(let root):
            transport = LocalStore(root: root)
        case .tus(let endpoint):
            let trusted = Set(configuration.trustedOrigins.compactMap { URL(string: $0).flatMap(origin(of:)) })
            let server = await info ?? .init()
            if let version = server.ietfDraftVersion {
                transport = ResumableDraftClient(
                    endpoint: endpoint, client: .uploads, timeout: configuration.requestTimeout, interopVersion: version, length: opened.length,
                    trustedOrigins: trusted)
            } else {
                transport = TusClient(endpoint: endpoint, client: .uploads, timeout: configuration.requestTimeout, server: server, trustedOrigins: trusted)
            }
        case .s3(let store):
            transport = S3Transport(
                store: store, client: .uploads, timeout: configuration.requestTimeout, multipartThreshold: configuration.multipartThreshold,
                partSize: max(5 * 1024 * 1024, configuration.partSize), parallelParts: max(1, configuration.parallelParts))
        case .presigned(let url):
            transport = PresignedPUT(url: url, client: .uploads, timeout: configuration.requestTimeout)
        }
        return UploadTask(session: UploadSession(
            transport: transport, destination: destination, request: request, source: opened, configuration: configuration,
            journal: journal, started: started))
    }

    /// Deletes a finished object given its location (as `finished` reported it): tus termination
    /// (`DELETE`) on a tus server, the file in a local store. An object already gone is not an error.
    public func delete(_ location: String, authorization: String? = nil) async throws(UploadError) {
        switch kind {
        case .tus(let endpoint):
            let client = TusClient(endpoint: endpoint, client: .uploads, timeout: configuration.requestTimeout, server: .init())
            do {
                try await client.terminate(location, request: UploadRequest(key: "", authorization: authorization))
            } catch {
                throw UploadError(error, location)
            }
        case .s3(let store):
            let key = store.key(of: location)
            guard let key else { throw UploadError(.rejected, "\(location) is not in s3://\(store.bucket)/\(store.prefix)") }
            do {
                _ = try await store.perform(store.request(.DELETE, key: key), expecting: [204, 200], client: .uploads, timeout: configuration.requestTimeout)
            } catch {
                throw UploadError(error, location)
            }
        case .presigned:
            throw UploadError(.rejected, "a presigned PUT URL cannot delete")
        case .local(let root):
            guard let url = URL(string: location), url.isFileURL, url.standardizedFileURL.path.hasPrefix(root.path + "/") else {
                throw UploadError(.rejected, "\(location) is not in the store \(root.path)")
            }
            do {
                try FileManager.default.removeItem(at: url)
            } catch CocoaError.fileNoSuchFile {
                return
            } catch {
                throw UploadError(.io, "\(url.path): \(error.localizedDescription)")
            }
        }
    }

    /// Whether the destination can say what it holds under a key (`existingObject`): S3 can.
    public var knowsObjects: Bool {
        if case .s3 = kind { true } else { false }
    }

    /// The URL an object under `key` has at an S3 destination (nil for others, where the upload tells).
    public func objectURL(key: String) -> String? {
        guard case .s3(let store) = kind else { return nil }
        return store.url(for: key).absoluteString
    }

    /// A short-lived presigned GET for the object under `key` at an S3 destination (nil for others).
    public func presignedGET(key: String, expires: Int = 300) -> URL? {
        guard case .s3(let store) = kind else { return nil }
        return store.presignedGET(key: key, expires: expires)
    }

    /// The metadata of the object at `key` if the destination has it (S3: `HEAD`, the `x-amz-meta-*`
    /// headers without their prefix); nil when it has not, or cannot tell (tus, local store).
    public func existingObject(key: String, authorization: String? = nil) async throws(UploadError) -> [String: String]? {
        guard case .s3(let store) = kind else { return nil }
        do {
            let (response, _) = try await store.perform(store.request(.HEAD, key: key), expecting: [200], client: .uploads, timeout: configuration.requestTimeout)
            var metadata: [String: String] = [:]
            for header in response.headers where header.name.lowercased().hasPrefix("x-amz-meta-") {
                metadata[String(header.name.lowercased().dropFirst("x-amz-meta-".count))] = header.value
            }
            return metadata
        } catch .status(404, _) {
            return nil
        } catch {
            throw UploadError(error, "HEAD \(key)")
        }
    }

    /// What the `http(s)://` server speaks and supports, asked once (`OPTIONS`). A tus server that does
    /// not answer yet gets the core protocol and creation only, and is asked again by the next upload.
    private func serverInfo(authorization: String?) async -> TusClient.ServerInfo? {
        guard case .tus(let endpoint) = kind else { return nil }
        if case .ietfDraft(let version) = configuration.httpProtocol { return TusClient.ServerInfo(ietfDraftVersion: version) }
        if let known = server.withLock({ $0 }) { return known }
        // A server that accepts connections and never answers must not hold the upload past its first-contact budget.
        let info = await TusClient.discover(
            endpoint: endpoint, client: .uploads, timeout: max(.seconds(1), min(configuration.requestTimeout, configuration.firstContactDuration, configuration.maxRetryDuration)),
            authorization: authorization, checksums: configuration.checksums, askingForDraft: configuration.httpProtocol == .automatic)
        if let info { server.withLock { $0 = info } }
        return info
    }

    /// Uploads many items, at most `maxConcurrent` at a time; returns each one's terminal event in order.
    public func uploadAll(_ items: [(UploadSource, UploadRequest)], maxConcurrent: Int = 4) async -> [UploadEvent] {
        var results = [UploadEvent?](repeating: nil, count: items.count)
        await BoundedConcurrency.run(count: items.count, limit: maxConcurrent) { index in
            let (source, request) = items[index]
            return await self.upload(source, request: request).result()
        } finished: { index, event in
            results[index] = event
        }
        return results.map { $0! }
    }
}
