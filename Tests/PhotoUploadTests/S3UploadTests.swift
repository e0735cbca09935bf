import AsyncHTTPClient
import NIOHTTP1
import Foundation
import Testing
import TestSupport
@testable import PhotoUpload

/// Against moto's S3 server on 127.0.0.1 (in memory; it does not check signatures — SigV4Tests
/// check those against the AWS vectors), reading the server's state back with signed requests.
@Suite(.serialized) struct S3UploadTests {
    func configuration(part: Int = 5 * 1024 * 1024, parallel: Int = 4, threshold: Int = 8 * 1024 * 1024, retry: Duration = .seconds(30)) -> UploadConfiguration {
        var c = UploadConfiguration()
        c.partSize = part
        c.parallelParts = parallel
        c.multipartThreshold = threshold
        c.maxRetryDuration = retry
        c.initialBackoff = .milliseconds(50)
        c.maxBackoff = .milliseconds(300)
        return c
    }

    /// The bucket as the tests see it: signed GET / list requests straight to moto.
    struct Bucket {
        let store: S3Store

        init(_ moto: MotoServer, _ name: String) throws {
            store = try S3Store(url: "s3://\(name)", environment: moto.environment())
        }

        func object(_ key: String) async throws -> [UInt8]? { try await store.download(key, client: .shared) }

        func keys(prefix: String = "") async throws -> [String] {
            let (_, body) = try await store.perform(
                store.request(.GET, key: "", query: "list-type=2&prefix=\(SigV4.encode(prefix))"), expecting: [200], client: .shared, timeout: .seconds(30))
            return XMLText.all("Key", in: body)
        }

        /// Multipart uploads started and neither completed nor aborted (ListMultipartUploads).
        func unfinishedUploads() async throws -> [String] {
            let (_, body) = try await store.perform(store.request(.GET, key: "", query: "uploads="), expecting: [200], client: .shared, timeout: .seconds(30))
            return XMLText.all("Key", in: body)
        }
    }

    @Test(arguments: [100_000, 1_000_000, 20_000_000])
    func smallAndLargeUploadsAreByteIdentical(size: Int) async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let bucket = try Bucket(moto, "photos")
        let bytes = testBytes(size, seed: UInt64(size))
        let uploader = try Uploader(destination: "s3://photos/batch/2026", configuration: configuration(), environment: moto.environment())
        var events: [UploadEvent] = []
        for await event in await uploader.upload(.bytes(bytes), request: UploadRequest(key: "a/photo.jpg", metadata: ["origin": "test"])).events {
            events.append(event)
        }
        guard case .finished(let location) = events.last else { Issue.record("\(events.last.map(String.init(describing:)) ?? "none")"); return }
        #expect(location == "\(moto.endpoint)/photos/batch/2026/a/photo.jpg")
        #expect(try await bucket.object("batch/2026/a/photo.jpg") == bytes)
        #expect(try await uploader.existingObject(key: "a/photo.jpg")?["origin"] == "test")
        let progress = events.compactMap { if case .progress(let p) = $0 { p } else { nil } }
        #expect(progress.count >= 2, "progress as bytes are sent")
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.sent <= $1.sent && $0.acknowledged <= $1.acknowledged })
        #expect(progress.last?.acknowledged == Int64(size))
        #expect(try await bucket.unfinishedUploads().isEmpty)
    }

    @Test func cancellingAMultipartUploadAbortsIt() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let bucket = try Bucket(moto, "photos")
        var slow = configuration(parallel: 1)
        slow.maxBytesPerSecond = 20_000_000
        let uploader = try Uploader(destination: "s3://photos", configuration: slow, environment: moto.environment())
        let task = await uploader.upload(.bytes(testBytes(30_000_000)), request: UploadRequest(key: "big.jpg"))
        var sawUnfinished = false
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 10 * 1024 * 1024, !sawUnfinished {
                sawUnfinished = try await bucket.unfinishedUploads() == ["big.jpg"]
                task.cancel()
            }
        }
        #expect(await task.result() == .cancelled)
        #expect(sawUnfinished, "a multipart upload was in progress")
        #expect(try await bucket.unfinishedUploads().isEmpty, "aborted: ListMultipartUploads is empty")
        #expect(try await bucket.keys().isEmpty)
    }

    @Test func injectedFaultsAreRetried() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let bucket = try Bucket(moto, "photos")
        let proxy = try FaultProxy(upstream: moto.server.port, faults: ["--fail-503", "3", "--drop", "5"])
        let endpoint = "http://127.0.0.1:\(proxy.server.port)"
        let uploader = try Uploader(destination: "s3://photos", configuration: configuration(parallel: 2), environment: moto.environment(endpoint: endpoint))
        for (key, size) in [("small.jpg", 300_000), ("large.jpg", 18_000_000)] {
            let bytes = testBytes(size, seed: UInt64(size))
            let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: key)).result()
            guard case .finished = result else { Issue.record("\(key): \(result)"); continue }
            #expect(try await bucket.object(key) == bytes, "\(key)")
        }
        #expect(try await bucket.unfinishedUploads().isEmpty)

        let failing = try FaultProxy(upstream: moto.server.port, faults: ["--fail-503", "1000"])
        let budget = try Uploader(
            destination: "s3://photos", configuration: configuration(retry: .seconds(5)),
            environment: moto.environment(endpoint: "http://127.0.0.1:\(failing.server.port)"))
        let result = await budget.upload(.bytes(testBytes(1000)), request: UploadRequest(key: "never.jpg")).result()
        guard case .failed(let error) = result else { Issue.record("\(result)"); return }
        // Every answer was a 503; on a loaded machine the last attempt may have timed out instead, and the
        // error still names the server's last answer. A 5 s budget (it also bounds each request): with 1 s the
        // proxy's first answer, which has taken over 2 s with the whole suite running, came too late to be named.
        #expect(error.kind == .retriesExhausted && error.message.contains("503"), "\(error.message)")
    }

    @Test func aPresignedURLUploadsWithoutTheKeys() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let bucket = try Bucket(moto, "photos")
        let url = bucket.store.presignedPUT(key: "profile_images/u1/me.jpg", expires: 600)
        #expect(url.query?.contains("X-Amz-Signature=") == true && url.query?.contains("X-Amz-Expires=600") == true)
        let bytes = testBytes(250_000, seed: 5)
        // No credentials in this uploader's environment: only the URL.
        let uploader = try Uploader(destination: url.absoluteString, environment: [:])
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "ignored")).result()
        #expect(result == .finished(location: "\(moto.endpoint)/photos/profile_images/u1/me.jpg"))
        #expect(try await bucket.object("profile_images/u1/me.jpg") == bytes)
    }

    /// moto does not check Content-MD5, so the mapping of S3's answer to a damaged body is tested on its own.
    @Test func aDamagedBodyIsSentAgainNotGivenUpOn() {
        let badDigest = """
            <?xml version="1.0" encoding="UTF-8"?><Error><Code>BadDigest</Code><Message>The Content-MD5 you specified did not match what we received.</Message></Error>
            """
        #expect(failure(status: 400, body: badDigest, request: "PUT k") == .status(460, "PUT k: 400 BadDigest: The Content-MD5 you specified did not match what we received."))
        let denied = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
        #expect(failure(status: 403, body: denied, request: "PUT k") == .status(403, "PUT k: 403 AccessDenied: Access Denied"))
        #expect(XMLText.all("ETag", in: "<a><ETag>&#34;x&#34;</ETag><ETag>&quot;y&quot;</ETag></a>") == ["\"x\"", "\"y\""])
    }

    @Test func addressingStylesAndConfigurationFromTheEnvironment() throws {
        let aws = try S3Store(url: "s3://photos/a/b", environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-west-1"])
        #expect(aws.addressing == .virtual)
        #expect(aws.url(for: "x y.jpg").absoluteString == "https://photos.s3.eu-west-1.amazonaws.com/a/b/x%20y.jpg")
        let custom = try S3Store(url: "s3://photos", environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://minio:9000"])
        #expect(custom.addressing == .path && custom.signer.region == "us-east-1")
        #expect(custom.url(for: "p/q.jpg").absoluteString == "http://minio:9000/photos/p/q.jpg")
        let forced = try S3Store(
            url: "s3://photos", environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://minio:9000", "AWS_S3_ADDRESSING_STYLE": "virtual", "AWS_SESSION_TOKEN": "t"])
        #expect(forced.url(for: "q.jpg").absoluteString == "http://photos.minio:9000/q.jpg")
        #expect(forced.signer.credentials.sessionToken == "t")
        #expect(throws: UploadError.self) { try S3Store(url: "s3://photos", environment: [:]) }
        // The shared credentials file, as the AWS tools read it.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString)")
        try "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n[ci]\n# a comment\naws_access_key_id=AKIDCI\naws_secret_access_key=c\naws_session_token = tok\n"
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let byDefault = try S3Store(url: "s3://photos", environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path])
        #expect(byDefault.signer.credentials == .init(accessKeyId: "AKIDDEFAULT", secretAccessKey: "d"))
        let byProfile = try S3Store(url: "s3://photos", environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "ci"])
        #expect(byProfile.signer.credentials == .init(accessKeyId: "AKIDCI", secretAccessKey: "c", sessionToken: "tok"))
        #expect(throws: UploadError.self) { try S3Store(url: "s3:///key", environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"]) }
    }
}
