import Foundation
import Testing
import TestSupport
@testable import PhotoPrep

/// `photoprep prepare` as a batch: resume, reports, JSON events, interruption — on the built binary.
@Suite struct BatchCommandTests {
    /// A folder with `copies` copies of two real photos (distinct content: one byte of a COM segment differs).
    func photoFolder(copies: Int) throws -> URL {
        let root = try temporaryFolder()
        let inbox = root.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let sources = [try Fixture.bytes("photos/storm-1920x1280.jpg"), try Fixture.bytes("photos/ladybird-2560x1600.jpg")]
        for i in 0..<copies {
            var bytes = sources[i % 2]
            // Insert a comment segment after SOI so that every copy has its own content hash.
            let comment = Array("copy \(i)".utf8)
            bytes.insert(contentsOf: [0xFF, 0xFE, 0, UInt8(comment.count + 2)] + comment, at: 2)
            try Data(bytes).write(to: inbox.appendingPathComponent(String(format: "photo-%03d.jpg", i)))
        }
        return root
    }

    func outputs(in folder: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jpg") }.sorted()
    }

    @Test func reRunSkipsWhatIsPreparedAndReportsMatchTheDisk() async throws {
        let root = try photoFolder(copies: 4)
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out"), report = root.appendingPathComponent("report.json")
        let first = try await photoprep(["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--report", report.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("4 prepared, 0 unchanged, 0 skipped, 0 failed"))

        let rows = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as! [[String: Any]]
        #expect(rows.count == 4)
        for row in rows {
            #expect(row["status"] as? String == "prepared")
            let path = row["output"] as! String
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
            #expect(size == row["output_bytes"] as? Int ?? row["outputBytes"] as? Int)
            let image = try decodeJPEG([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(image.width == row["outputWidth"] as? Int)
        }

        let second = try await photoprep(["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--json"])
        #expect(second.status == 0)
        let events = second.stdout.split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(events.count == 5)
        #expect(events.prefix(4).allSatisfy { $0["event"] as? String == "unchanged" })
        let summary = try #require(events.last?["summary"] as? [String: Any])
        #expect(summary["unchanged"] as? Int == 4 && summary["prepared"] as? Int == 0)

        // Changed settings prepare again; --force too.
        let third = try await photoprep(["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--preset", "profile"])
        #expect(third.stdout.contains("4 prepared, 0 unchanged"))
        let forced = try await photoprep(["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--preset", "profile", "--force"])
        #expect(forced.stdout.contains("4 prepared, 0 unchanged"))
    }

    /// `--thumbnails`: each output's thumbnails under thumbnails/EDGE/ at its relative path, the output's pixels
    /// scaled down; a re-run skips them while all are there and makes a missing one again.
    @Test func thumbnailsAreWrittenBesideTheOutputsAndResumed() async throws {
        let root = try photoFolder(copies: 2)
        defer { try? FileManager.default.removeItem(at: root) }
        let inbox = root.appendingPathComponent("inbox").path, out = root.appendingPathComponent("out")
        let first = try await photoprep(["prepare", inbox, "--out", out.path, "--thumbnails", "256,128", "--preset", "photo"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("2 prepared, 0 unchanged"))
        #expect(try outputs(in: out) == [
            "inbox/photo-000.jpg", "inbox/photo-001.jpg",
            "thumbnails/128/inbox/photo-000.jpg", "thumbnails/128/inbox/photo-001.jpg",
            "thumbnails/256/inbox/photo-000.jpg", "thumbnails/256/inbox/photo-001.jpg",
        ])
        for name in ["photo-000.jpg", "photo-001.jpg"] {
            let full = try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent("inbox/\(name)"))))
            for edge in [256, 128] {
                let thumbnail = try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent("thumbnails/\(edge)/inbox/\(name)"))))
                #expect(max(thumbnail.width, thumbnail.height) == edge, "\(name) \(edge)")
                #expect(abs(thumbnail.width * full.height - thumbnail.height * full.width) <= full.width, "\(name) \(edge): the photo's shape")
                let scaled = Resizer.resize(full, width: thumbnail.width, height: thumbnail.height)
                #expect(ThumbnailTests.difference(scaled, thumbnail) < 6, "\(name) \(edge): the photo's pixels")
            }
        }
        // The two photos differ: each thumbnail is its own photo's, not the other's.
        let a = try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent("thumbnails/128/inbox/photo-000.jpg"))))
        let b = try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent("thumbnails/128/inbox/photo-001.jpg"))))
        #expect(a.width != b.width || a.height != b.height || ThumbnailTests.difference(a, b) > 20)

        let again = try await photoprep(["prepare", inbox, "--out", out.path, "--thumbnails", "256,128", "--preset", "photo"])
        #expect(again.stdout.contains("0 prepared, 2 unchanged"), "\(again.stdout)")
        try FileManager.default.removeItem(at: out.appendingPathComponent("thumbnails/128/inbox/photo-001.jpg"))
        let repaired = try await photoprep(["prepare", inbox, "--out", out.path, "--thumbnails", "256,128", "--preset", "photo"])
        #expect(repaired.stdout.contains("1 prepared, 1 unchanged"), "\(repaired.stdout)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("thumbnails/128/inbox/photo-001.jpg").path))
        // Other sizes are other settings: everything again.
        let other = try await photoprep(["prepare", inbox, "--out", out.path, "--thumbnails", "512", "--preset", "photo"])
        #expect(other.stdout.contains("2 prepared, 0 unchanged"), "\(other.stdout)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("thumbnails/512/inbox/photo-000.jpg").path))

        // An input folder named thumbnails would write among them: refused, naming the file, nothing written.
        let thumbnailsFolder = root.appendingPathComponent("thumbnails")
        try FileManager.default.createDirectory(at: thumbnailsFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: inbox + "/photo-000.jpg", toPath: thumbnailsFolder.appendingPathComponent("a.jpg").path)
        let clash = try await photoprep(["prepare", thumbnailsFolder.path, "--out", root.appendingPathComponent("out2").path, "--thumbnails", "128"])
        #expect(clash.status == 2 && clash.stderr.contains("a.jpg") && clash.stderr.contains("among the thumbnails"), "\(clash.stderr)")
        #expect(try outputs(in: root.appendingPathComponent("out2")).isEmpty)
    }

    /// With `--upload`, the thumbnails go to the destination too, at the same keys as under --out.
    @Test func thumbnailsAreUploadedWithTheirPhoto() async throws {
        let root = try photoFolder(copies: 1)
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out"), destination = root.appendingPathComponent("bucket")
        let result = try await photoprep([
            "prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--thumbnails", "128",
            "--upload", destination.absoluteString, "--state", root.appendingPathComponent("state").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        for key in ["inbox/photo-000.jpg", "thumbnails/128/inbox/photo-000.jpg"] {
            let uploaded = try Data(contentsOf: destination.appendingPathComponent(key))
            #expect(uploaded == (try Data(contentsOf: out.appendingPathComponent(key))), "\(key)")
        }
        #expect(try decodeJPEG([UInt8](Data(contentsOf: destination.appendingPathComponent("thumbnails/128/inbox/photo-000.jpg")))).width == 128)
    }

    @Test func jsonEventsCarryTheReport() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try await photoprep([
            "prepare", Fixture.path("photos/ladybird-2560x1600.jpg"), Fixture.path("edge/photo.gif"), Fixture.path("edge/truncated.png"),
            "--out", root.path, "--json",
        ])
        #expect(result.status == 1)
        let events = result.stdout.split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(events.map { $0["event"] as! String }.sorted() == ["failed", "prepared", "skipped", "summary"])
        let prepared = try #require(events.first { $0["event"] as? String == "prepared" })
        let report = try #require(prepared["report"] as? [String: Any])
        #expect(report["outputWidth"] as? Int == 2048)
        #expect((report["quality"] as? Int ?? 0) > 50)
        let failed = try #require(events.first { $0["event"] as? String == "failed" })
        #expect((failed["reason"] as? String)?.contains("truncated.png") == true)
    }

    /// The placeholder and the capture time in `--json` and in the report; the re-run's `unchanged` event has them from
    /// the manifest.
    @Test func placeholderAndCaptureTimeInJSONAndTheReport() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = [Fixture.path("metadata/taken.webp"), Fixture.path("photos/storm-1920x1280.jpg")]
        let out = root.appendingPathComponent("o").path, report = root.appendingPathComponent("r.csv")
        for (run, event) in [(1, "prepared"), (2, "unchanged")] {
            let result = try await photoprep(["prepare"] + inputs + ["--out", out, "--json", "--report", report.path])
            #expect(result.status == 0, "\(result.stderr)")
            let reports = result.jsonLines.filter { $0["event"] as? String == event }.compactMap { $0["report"] as? [String: Any] }
            try #require(reports.count == 2, "run \(run): \(result.stdout)")
            for report in reports {
                let hash = try #require((report["placeholder"] as? String).flatMap { Data(base64Encoded: $0) }, "\(report)")
                let drawn = try #require(ThumbHash.decode([UInt8](hash)))
                let ratio = Double(try #require(report["outputWidth"] as? Int)) / Double(try #require(report["outputHeight"] as? Int))
                #expect(abs(log(Double(drawn.width) / Double(drawn.height) / ratio)) < 0.2)
            }
            #expect(Set(reports.map { $0["takenAt"] as? String }) == ["2024-06-01T14:03:22+02:00", nil], "run \(run)")
            let lines = try String(contentsOf: report, encoding: .utf8).split(separator: "\n")
            #expect(lines[0].contains(",encodes,placeholder,taken_at,seconds,"))
            let webp = try #require(lines.first { $0.contains("taken.webp") })
            let placeholders = reports.compactMap { $0["placeholder"] as? String }
            #expect(webp.contains(",2024-06-01T14:03:22+02:00,") && placeholders.contains { webp.contains(",\($0),") })
        }
    }

    @Test func csvReportHasOneRowPerInput() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let report = root.appendingPathComponent("r.csv")
        _ = try await photoprep([
            "prepare", Fixture.path("edge/progressive.jpg"), Fixture.path("edge/not-an-image.txt"), "--out", root.appendingPathComponent("o").path,
            "--report", report.path, "-q",
        ])
        let lines = try String(contentsOf: report, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("status,source,output,"))
        #expect(lines.contains { $0.hasPrefix("prepared,") && $0.contains("progressive.jpg") && $0.contains(",480,320,14326,") })
        #expect(lines.contains { $0.hasPrefix("skipped,") && $0.contains("not-an-image.txt") })
    }

    @Test func killedRunLeavesNoPartialOutputAndTheReRunFinishes() async throws {
        let root = try photoFolder(copies: 16)
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out")
        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = ["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--jobs", "1", "-q"]
        try launch(child)
        // Wait until a few photos are done, then kill -9 in the middle of the batch — watched from a thread of its own,
        // so that the kill is not late behind the other tests' work on the shared threads.
        let manifest = out.appendingPathComponent(".photoprep-manifest.jsonl")
        try await onThread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let lines = (try? String(contentsOf: manifest, encoding: .utf8))?.split(separator: "\n").count ?? 0
                if lines >= 3 { break }
                usleep(5_000)
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let partial = try outputs(in: out)
        #expect(partial.count >= 3 && partial.count < 16, "killed half-way: \(partial.count) outputs")
        for name in partial {
            // Every visible output is a whole JPEG.
            let image = try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent(name))))
            #expect(image.width > 0)
        }
        let rerun = try await photoprep(["prepare", root.appendingPathComponent("inbox").path, "--out", out.path])
        #expect(rerun.status == 0)
        #expect(rerun.stdout.contains("\(16 - partial.count) prepared, \(partial.count) unchanged"), "\(rerun.stdout)")
        #expect(try outputs(in: out).count == 16)
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func ctrlCFinishesThePhotosInHandAndSaysWhatRemains() async throws {
        let root = try photoFolder(copies: 24)
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out")
        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = ["prepare", root.appendingPathComponent("inbox").path, "--out", out.path, "--jobs", "1"]
        let stdout = Pipe()
        child.standardOutput = stdout
        child.standardError = Pipe()
        try launch(child)
        let manifest = out.appendingPathComponent(".photoprep-manifest.jsonl")
        // Watched from a thread of its own (as above), Ctrl-C once two photos are done.
        let text = try await onThread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, ((try? String(contentsOf: manifest, encoding: .utf8))?.split(separator: "\n").count ?? 0) < 2 {
                usleep(5_000)
            }
            kill(child.processIdentifier, SIGINT)
            let text = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            return text
        }
        #expect(child.terminationStatus == 130)
        #expect(text.contains("not started (interrupted: re-run the same command to finish)"), "\(text)")
        let done = try outputs(in: out)
        #expect(done.count < 24)
        for name in done { #expect(try decodeJPEG([UInt8](Data(contentsOf: out.appendingPathComponent(name)))).width > 0) }
    }

    @Test func outputInsideTheInputFolderIsNotReIngestedAndCollisionsGetDistinctNames() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.copyItem(atPath: Fixture.path("edge/progressive.jpg"), toPath: root.appendingPathComponent("a.jpg").path)
        try FileManager.default.copyItem(atPath: Fixture.path("edge/photo-rgb8.png"), toPath: root.appendingPathComponent("a.png").path)
        let out = root.appendingPathComponent("ready")
        for _ in 0..<2 {
            let result = try await photoprep(["prepare", root.path, "--out", out.path])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let name = root.lastPathComponent
        #expect(try outputs(in: out) == ["\(name)/a-png.jpg", "\(name)/a.jpg"])
    }

    /// Colliding names do not depend on which other files are there: a photo added beside them renames nothing.
    @Test func collidingNamesStayWhenAFileIsAdded() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inbox = root.appendingPathComponent("inbox"), out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let sources = ["Storm.JPG": "photos/storm-1920x1280.jpg", "Storm.jpg": "photos/ladybird-2560x1600.jpg", "Storm.png": "edge/photo-rgb8.png"]
        for (name, fixture) in sources { try FileManager.default.copyItem(atPath: Fixture.path(fixture), toPath: inbox.appendingPathComponent(name).path) }
        #expect(try await photoprep(["prepare", inbox.path, "--out", out.path]).status == 0)
        let before = try Dictionary(uniqueKeysWithValues: outputs(in: out).map { ($0, try Data(contentsOf: out.appendingPathComponent($0))) })
        #expect(before.keys.sorted() == ["inbox/Storm-JPG.jpg", "inbox/Storm-png.jpg", "inbox/Storm.jpg"])
        try FileManager.default.copyItem(atPath: Fixture.path("edge/progressive.jpg"), toPath: inbox.appendingPathComponent("Storm.JPEG").path)
        let again = try await photoprep(["prepare", inbox.path, "--out", out.path])
        #expect(again.status == 0 && again.stdout.contains("1 prepared, 3 unchanged"), "\(again.stdout)")
        let after = try outputs(in: out)
        #expect(after == ["inbox/Storm-JPEG.jpg", "inbox/Storm-JPG.jpg", "inbox/Storm-png.jpg", "inbox/Storm.jpg"])
        for (name, bytes) in before { #expect(try Data(contentsOf: out.appendingPathComponent(name)) == bytes, "\(name) kept") }
    }

    /// An `--out` that would put outputs on or among the inputs is refused before anything is written, and
    /// the originals are untouched: the input folder itself, its parent, a single file's own folder.
    @Test func anOutFolderThatWouldWriteOverTheInputsIsRefused() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inbox = root.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let photo = inbox.appendingPathComponent("storm.jpg")
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: photo.path)
        let original = try Data(contentsOf: photo)
        for (arguments, reason) in [
            ([inbox.path, "--out", inbox.path], "--out is this input folder"),
            ([inbox.path, "--out", root.path], "over its originals"),
            ([photo.path, "--out", inbox.path], "would replace an input"),
        ] {
            let result = try await photoprep(["prepare"] + arguments)
            #expect(result.status == 2 && result.stderr.contains(reason) && !result.stderr.contains("<subcommand>"), "\(arguments): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path) == ["storm.jpg"], "nothing written beside it")
            #expect(try Data(contentsOf: photo) == original)
        }
    }

    /// An `--out` inside an input folder is not read, so it may hold nothing of the input: one with a photo of its own
    /// is refused before anything is written (that photo was left out in silence, exit 0); one holding only what runs
    /// into it wrote is taken, run after run.
    @Test func anOutFolderInsideTheInputMayHoldOnlyItsOutputs() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let album = root.appendingPathComponent("album"), out = album.appendingPathComponent("2024")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: album.appendingPathComponent("a.jpg").path)
        try FileManager.default.copyItem(atPath: Fixture.path("orientation/landscape_3.jpg"), toPath: out.appendingPathComponent("b.jpg").path)
        let refused = try await photoprep(["prepare", album.path, "--out", out.path])
        #expect(refused.status == 2 && refused.stderr.contains("holds 1 entry of its own (b.jpg"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["b.jpg"], "nothing written")
        try FileManager.default.removeItem(at: out.appendingPathComponent("b.jpg"))
        for run in ["first", "second"] {
            let result = try await photoprep(["prepare", album.path, "--out", out.path, "--thumbnails", "128"])
            #expect(result.status == 0, "\(run): \(result.stdout)\(result.stderr)")
        }
        #expect(try outputs(in: out) == ["album/a.jpg", "thumbnails/128/album/a.jpg"])
    }

    /// A folder of the input that cannot be listed stops the run before anything is written, naming it (it was passed
    /// over in silence, exit 0). Run as an unprivileged user when the tests run as root, who can list any folder.
    @Test func anUnreadableFolderOfTheInputIsAnError() async throws {
        let root = try temporaryFolder()
        defer {
            chmod(root.appendingPathComponent("in/locked").path, 0o755)
            try? FileManager.default.removeItem(at: root)
        }
        let input = root.appendingPathComponent("in"), locked = input.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: input.appendingPathComponent("ok.jpg").path)
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: locked.appendingPathComponent("x.jpg").path)
        let out = root.appendingPathComponent("out")
        let result: CommandResult
        if getuid() == 0 {
            let binary = root.appendingPathComponent("photoprep").path
            try FileManager.default.copyItem(atPath: photoprepBinary.path, toPath: binary)
            chmod(root.path, 0o755)
            _ = try await runSupportCommand("chown", ["-R", "65534:65534", root.path])
            chmod(locked.path, 0)
            result = try await runSupportCommand(
                "setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary, "prepare", input.path, "--out", out.path])
        } else {
            chmod(locked.path, 0)
            result = try await photoprep(["prepare", input.path, "--out", out.path])
        }
        #expect(result.status == 2 && result.stderr.contains("\(locked.path): cannot read this folder"), "\(result.stdout)\(result.stderr)")
        let written = FileManager.default.fileExists(atPath: out.path) ? try outputs(in: out) : []
        #expect(written.isEmpty)
    }

    /// A file named twice, or reached through a link, is one input; a linked folder is walked (once, however
    /// the links loop); hidden entries are skipped.
    @Test func eachFileOnceLinkedFoldersFollowed() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inbox = root.appendingPathComponent("inbox"), elsewhere = root.appendingPathComponent("elsewhere")
        for folder in [inbox, elsewhere, inbox.appendingPathComponent("deep")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: inbox.appendingPathComponent("a.jpg").path)
        try FileManager.default.copyItem(atPath: Fixture.path("orientation/landscape_3.jpg"), toPath: elsewhere.appendingPathComponent("b.jpg").path)
        try FileManager.default.copyItem(atPath: Fixture.path("orientation/landscape_5.jpg"), toPath: inbox.appendingPathComponent(".hidden.jpg").path)
        try FileManager.default.createSymbolicLink(atPath: inbox.appendingPathComponent("linked").path, withDestinationPath: elsewhere.path)
        try FileManager.default.createSymbolicLink(atPath: inbox.appendingPathComponent("deep/loop").path, withDestinationPath: "..")
        let out = root.appendingPathComponent("out")
        let a = inbox.appendingPathComponent("a.jpg").path
        let result = try await photoprep(["prepare", inbox.path, a, a, inbox.path + "/./a.jpg", "--out", out.path])
        #expect(result.status == 0 && result.stdout.contains("2 prepared"), "\(result.stdout)\(result.stderr)")
        #expect(try outputs(in: out) == ["inbox/a.jpg", "inbox/linked/b.jpg"])
    }
}

extension BatchCommandTests {
    /// An `--out` that cannot be made (here under a regular file; a read-only mount takes the same path):
    /// exit 1 and the system's plain reason, no Cocoa error code, no usage text.
    @Test func anOutputFolderThatCannotBeMadeIsAPlainError() async throws {
        let root = try temporaryFolder()
        let file = root.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let result = try await photoprep(["prepare", Fixture.path("orientation/landscape_1.jpg"), "--out", file.appendingPathComponent("out").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot create the output folder: Not a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("Usage:"), "\(result.stderr)")
    }

    /// A file whose name is not UTF-8 is reported as skipped, not dropped in silence.
    @Test func aNameThatIsNotUTF8IsReported() async throws {
        let root = try temporaryFolder()
        let inbox = root.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let bytes = try Fixture.bytes("orientation/landscape_1.jpg")
        let name: [UInt8] = Array((inbox.path + "/photo-").utf8) + [0xFF] + Array(".jpg".utf8) + [0]  // 0xFF: never UTF-8
        let fd = name.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
        #expect(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try Data(bytes).write(to: inbox.appendingPathComponent("good.jpg"))
        let result = try await photoprep(["prepare", inbox.path, "--out", root.appendingPathComponent("out").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 prepared"))
        #expect(result.stderr.contains("skipped: \(inbox.path): 1 entry whose name is not valid UTF-8"), "\(result.stderr)")
    }
}
