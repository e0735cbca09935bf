import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport
@testable import PhotoUpload

/// `photoprep upload` and `photoprep prepare --upload s3://…`, run as processes, against moto.
@Suite(.serialized) struct S3CommandTests {
    static let testImages = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestImages")

    @Test func aKilledMultipartUploadIsContinuedViaListParts() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let proxy = try FaultProxy(upstream: moto.server.port, faults: ["--delay-data", "0.25"])
        let environment = moto.environment(endpoint: "http://127.0.0.1:\(proxy.server.port)")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = testBytes(30_000_000, seed: 77)
        let file = folder.appendingPathComponent("panorama.jpg")
        try Data(bytes).write(to: file)
        let state = folder.appendingPathComponent("state")
        let part = 5 * 1024 * 1024
        let arguments = ["upload", file.path, "--to", "s3://photos/raw", "--state", state.path, "--part-size", "5MiB", "--parallel-parts", "1"]

        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = arguments
        child.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try launch(child)
        let journal = UploadJournal(folder: state)
        // Watched from a thread of its own: a kill late behind the other tests' work would find the upload done.
        try await onThread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, (journal.entries().first?.offset ?? 0) < Int64(2 * part) { usleep(20_000) }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let entry = try #require(journal.entries().first)
        #expect(entry.location.hasPrefix("multipart:"), "the UploadId is journalled")
        #expect(entry.offset >= Int64(2 * part) && entry.offset < Int64(bytes.count))

        let again = try await photoprep(arguments, environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        let store = try S3Store(url: "s3://photos", environment: moto.environment())
        #expect(try await store.download("raw/panorama.jpg", client: .shared) == bytes)
        #expect(proxy.requests["POST"] == 2, "one CreateMultipartUpload and one Complete: continued, not restarted (\(proxy.requests))")
        #expect(proxy.dataBytes <= bytes.count + part + 4096, "re-sent \(proxy.dataBytes - bytes.count) bytes")
        #expect(journal.entries().isEmpty)
    }

    @Test func twoShardsPrepareTheBatchOnceBetweenThem() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let proxy = try FaultProxy(upstream: moto.server.port, faults: [])
        let environment = moto.environment(endpoint: "http://127.0.0.1:\(proxy.server.port)")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = [Self.testImages.appendingPathComponent("orientation").path, Self.testImages.appendingPathComponent("photos").path]
        func shard(_ i: Int, out: String) -> [String] {
            ["prepare"] + inputs + ["--out", folder.appendingPathComponent(out).path, "--upload", "s3://photos/batch", "--shard", "\(i)/2",
                                    "--state", folder.appendingPathComponent("state-\(out)").path, "--json"]
        }
        // Two "machines" at once: separate outputs and journals, one bucket.
        let processes = try [shard(1, out: "a"), shard(2, out: "b")].map { arguments in
            let p = Process()
            p.executableURL = photoprepBinary
            p.arguments = arguments
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try launch(p)
            return (p, out)
        }
        var prepared: [[String]] = []
        for (p, out) in processes {
            let text = try await onThread {
                let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                return text
            }
            #expect(p.terminationStatus == 0)
            prepared.append(CommandResult(status: 0, stdout: text, stderr: "").jsonLines.filter { $0["event"] as? String == "prepared" }.compactMap { $0["input"] as? String })
        }
        let all = try FileManager.default.subpathsOfDirectory(atPath: Self.testImages.appendingPathComponent("orientation").path).count
            + FileManager.default.subpathsOfDirectory(atPath: Self.testImages.appendingPathComponent("photos").path).count
        #expect(prepared.allSatisfy { !$0.isEmpty }, "both shards had work: \(prepared.map(\.count))")
        #expect(Set(prepared[0]).isDisjoint(with: prepared[1]))
        #expect(prepared[0].count + prepared[1].count == all)
        let store = try S3Store(url: "s3://photos", environment: moto.environment())
        let (_, listing) = try await store.perform(store.request(.GET, key: "", query: "list-type=2&prefix=batch%2F"), expecting: [200], client: .shared, timeout: .seconds(30))
        let keys = XMLText.all("Key", in: listing)
        #expect(keys.count == all && Set(keys).count == all, "every photo exactly once: \(keys)")
        let expected = try Set(["orientation", "photos"].flatMap { folder in
            try FileManager.default.subpathsOfDirectory(atPath: Self.testImages.appendingPathComponent(folder).path)
                .map { "batch/\(folder)/\(($0 as NSString).deletingPathExtension).jpg" }
        })
        #expect(Set(keys) == expected, "each under its folder and name")
        #expect(proxy.requests["PUT"] == all, "one PUT per photo")

        // A crashed machine's re-run (fresh --out, no local manifest): everything is already there.
        let rerun = try await photoprep(shard(1, out: "c"), environment: environment)
        #expect(rerun.status == 0)
        let events = rerun.jsonLines.compactMap { $0["event"] as? String }.filter { $0 != "summary" }
        #expect(events == Array(repeating: "present", count: prepared[0].count), "\(events)")
        #expect(proxy.requests["PUT"] == all, "nothing uploaded again")
    }
}
