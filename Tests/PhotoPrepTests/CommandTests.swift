import Foundation
import Testing
import TestSupport
@testable import PhotoPrep


@Suite struct CommandTests {
    /// One executable runs every command — what `swift run photoprep` builds is all a user needs — and starts
    /// without libheif: its static initialisers cost more than a small photo's decode, so it is loaded only when a
    /// HEIF file is opened (and then works: a HEIC photo is probed and prepared).
    @Test func oneBinaryRunsEveryCommandAndLoadsLibheifOnlyForHEIF() async throws {
        let linked = Process()
        linked.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        linked.arguments = [photoprepBinary.path]
        let pipe = Pipe()
        linked.standardOutput = pipe
        try launch(linked)
        let libraries = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        linked.waitUntilExit()
        #expect(libraries.contains("libturbojpeg"), "\(libraries)")
        #expect(!libraries.contains("libheif"), "photoprep links libheif: \(libraries)")
        for (command, usage) in [("serve", "photoprep serve"), ("upload", "photoprep upload"), ("presign", "photoprep presign")] {
            let help = try await photoprep([command, "--help"])
            #expect(help.status == 0 && help.stdout.contains(usage), "\(help.stdout)\(help.stderr)")
        }
        let help = try await photoprep(["--help"])
        for command in ["prepare", "probe", "upload", "serve", "group", "sync"] { #expect(help.stdout.contains("  \(command)"), "\(help.stdout)") }
        let prepareHelp = try await photoprep(["prepare", "--help"])
        #expect(prepareHelp.stdout.contains("--upload <upload>"), "prepare's help, with its upload options")
        let unknown = try await photoprep(["frobnicate"])
        #expect(unknown.status == 2 && unknown.stderr.contains("frobnicate"), "\(unknown.stderr)")

        // What the dynamic loader opens (`LD_DEBUG=files` prints each library to stderr): libheif for a HEIC photo only.
        let jpegProbe = try await photoprep(["probe", Fixture.path("photos/storm-1920x1280.jpg")], environment: ["LD_DEBUG": "files"])
        #expect(jpegProbe.status == 0 && jpegProbe.stderr.contains("file=libturbojpeg"), "\(jpegProbe.stderr)")
        #expect(!jpegProbe.stderr.contains("file=libheif"), "libheif loaded for a JPEG: \(jpegProbe.stderr)")
        let probe = try await photoprep(["probe", Fixture.path("formats/display-p3.heic")], environment: ["LD_DEBUG": "files"])
        #expect(probe.status == 0 && probe.stdout.contains("HEIF, HEVC"), "\(probe.stdout)\(probe.stderr)")
        #expect(probe.stderr.contains("file=libheif"), "\(probe.stderr)")
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let prepared = try await photoprep(["prepare", Fixture.path("formats/display-p3.heic"), "--preset", "profile", "--out", root.path])
        #expect(prepared.status == 0, "\(prepared.stderr)")
        let image = try decodeJPEG([UInt8](Data(contentsOf: root.appendingPathComponent("display-p3.jpg"))))
        #expect(image.width == 640 && image.height == 400)
    }

    @Test func preparesAMixedFolderNamingTheBadFiles() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let inbox = root.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox.appendingPathComponent("sub"), withIntermediateDirectories: true)
        for (fixture, name) in [
            ("photos/storm-1920x1280.jpg", "storm.jpg"), ("edge/interlaced.png", "sub/interlaced.png"),
            ("edge/truncated.png", "broken.png"), ("edge/not-an-image.txt", "notes.txt"),
        ] {
            try FileManager.default.copyItem(atPath: Fixture.path(fixture), toPath: inbox.appendingPathComponent(name).path)
        }
        let before = try Data(contentsOf: inbox.appendingPathComponent("storm.jpg"))
        let out = root.appendingPathComponent("out")
        let result = try await photoprep(["prepare", inbox.path, "--preset", "profile", "--out", out.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("broken.png: decode failed (corrupt data): the \"IDAT\" chunk"), "\(result.stderr)")
        #expect(result.stderr.contains("skipped: \(inbox.path)/notes.txt: sniff failed (unsupported format): found text"))
        for name in ["inbox/storm.jpg", "inbox/sub/interlaced.jpg"] {
            let jpeg = try [UInt8](Data(contentsOf: out.appendingPathComponent(name)))
            #expect(jpeg.count < 500 * 1024)
            let image = try decodeJPEG(jpeg)
            #expect(max(image.width, image.height) <= 1024)
        }
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("inbox/broken.jpg").path))
        #expect(try Data(contentsOf: inbox.appendingPathComponent("storm.jpg")) == before, "inputs untouched")
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func customEdgeAndBudget() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try await photoprep([
            "prepare", Fixture.path("photos/ladybird-2560x1600.jpg"), "--max-edge", "800", "--max-bytes", "100KB", "--out", root.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let jpeg = try [UInt8](Data(contentsOf: root.appendingPathComponent("ladybird-2560x1600.jpg")))
        #expect(jpeg.count < 100_000)
        #expect(try decodeJPEG(jpeg).width == 800)
    }

    /// `--quality` reaches the pipeline through both command-line readers, the JSON events carry the score, and
    /// `photoprep score` measures the output again to the same number; a score of photos of two sizes names the file.
    @Test func qualityTargetsAndTheScoreCommand() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        var scores: [String: Double] = [:]
        for (target, extra) in [("visually-lossless", [String]()), ("good", ["--report", root.appendingPathComponent("r.csv").path])] {
            let out = root.appendingPathComponent(target)
            let result = try await photoprep(["prepare", Fixture.path("photos/storm-1920x1280.jpg"), "--preset", "profile", "--quality", target, "--out", out.path, "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let event = try #require(result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["report"] != nil }, "\(result.stdout)")
            let report = try #require(event["report"] as? [String: Any])
            let score = try #require(report["score"] as? Double, "\(report)")
            scores[target] = score
            #expect(report["target"] as? String == (target == "good" ? "score:75" : "score:90"))
            let again = try await photoprep(["score", out.appendingPathComponent("storm-1920x1280.jpg").path, out.appendingPathComponent("storm-1920x1280.jpg").path])
            #expect(again.status == 0 && again.stdout.hasPrefix("100.00"), "\(again.stdout)\(again.stderr)")
        }
        #expect(scores["visually-lossless"]! >= 90 && scores["good"]! >= 75 && scores["good"]! < scores["visually-lossless"]!, "\(scores)")
        let csv = try String(contentsOf: root.appendingPathComponent("r.csv"), encoding: .utf8)
        #expect(csv.contains(",score,") && csv.contains(String(format: "%g", scores["good"]!)), "\(csv)")
        let mismatch = try await photoprep(["score", Fixture.path("photos/storm-1920x1280.jpg"), Fixture.path("photos/ladybird-2560x1600.jpg")])
        #expect(mismatch.status == 1 && mismatch.stderr.contains("ladybird-2560x1600.jpg") && mismatch.stderr.contains("sizes differ"), "\(mismatch.stderr)")
        #expect(try await photoprep(["prepare", Fixture.path("photos"), "--quality", "superb", "--out", root.path]).status == 2)
    }

    @Test func badOptionsAreUsageErrors() async throws {
        let result = try await photoprep(["prepare", Fixture.path("photos"), "--max-bytes", "lots", "--out", "/tmp/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--max-bytes"))
        #expect(try await photoprep(["prepare", Fixture.path("photos"), "--jobs", "0", "--out", "/tmp/x"]).status == 2)
        #expect(try await photoprep(["prepare", Fixture.path("photos"), "--out", Fixture.path("photos/storm-1920x1280.jpg")]).status == 2, "--out is a file")
        #expect(try await photoprep(["prepare", "/nonexistent/folder", "--out", "/tmp/x"]).status == 2)
        #expect(try await photoprep(["frobnicate"]).status == 2)
    }
}

extension CommandTests {
    /// Every command's help: defaults as people write them (`8 MiB`, `FFFFFF`), never a Swift value's
    /// description (`ByteSize(bytes: 8388608)`), and no option that takes a secret as an argument.
    @Test func helpTextsShowNoSwiftValuesAndTakeNoSecrets() async throws {
        let commands = [["prepare"], ["probe"], ["upload"], ["presign"], ["bench"], ["group", "create"], ["group", "set-photo"],
                        ["profile", "set-photo"], ["profile", "add-photos"], ["sync"], ["user", "add"]]
        for command in commands {
            let help = try await photoprep(command + ["--help"]).stdout
            #expect(help.contains("USAGE"), "\(command)")
            let swiftValue = help.range(of: #"[A-Z][A-Za-z]+\([a-z]+: "#, options: .regularExpression)
            #expect(swiftValue == nil, "\(command): \(help)")
            #expect(!help.contains("--token-secret <"), "\(command): a secret as an argument")
        }
    }
}
