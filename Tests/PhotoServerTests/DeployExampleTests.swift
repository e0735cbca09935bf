import Foundation
import PhotoPrep
import Testing
import TestSupport

/// The shipped `deploy/` example as an operator installs it: the systemd unit verified by systemd and its
/// confinement scored, and the nginx site in front of the built server with the environment file's settings —
/// TLS at the proxy, plain HTTP redirected, upload locations on the proxy's URL, and an upload body passed on
/// as it arrives, so an interrupted PATCH keeps what had arrived and resumes from there.
@Suite struct DeployExampleTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")

    @Test func theUnitVerifiesAndIsConfined() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The unit as shipped, but for the binary's path: systemd checks that ExecStart exists.
        let shipped = try String(contentsOf: Self.deploy.appendingPathComponent("photoprep.service"), encoding: .utf8)
        try #require(shipped.contains("ExecStart=/usr/local/bin/photoprep serve"))
        let unit = folder.appendingPathComponent("photoprep.service")
        try shipped.replacingOccurrences(of: "/usr/local/bin/photoprep", with: photoprepBinary.path).write(to: unit, atomically: true, encoding: .utf8)
        let verified = try await runSupportCommand("systemd-analyze", ["verify", unit.path])
        #expect(verified.status == 0 && verified.stdout.isEmpty && verified.stderr.isEmpty, "no unknown keys, no warnings: \(verified)")
        let security = try await runSupportCommand("systemd-analyze", ["security", "--offline=true", unit.path])
        let line = try #require(security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for photoprep.service:") }, "\(security)")
        let exposure = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(exposure <= 2.0, "systemd's exposure score (0 confined … 10 exposed): \(line)")
    }

    @Test func theSiteInFrontOfTheServerPassesUploadsOnAsTheyArrive() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = (folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path)
        try await ServeTLSTests.selfSigned(certificate: certificate, key: key)
        let (tlsPort, plainPort) = (ServerProcess.freePort(), ServerProcess.freePort())
        let base = "https://127.0.0.1:\(tlsPort)"

        // The server with the shipped environment file, but for the test's secret and the proxy's address.
        var environment = try Self.environmentFile()
        #expect(environment["PHOTOPREP_HOST"] == "127.0.0.1", "behind the proxy, on loopback only")
        environment["PHOTOPREP_JWT_SECRET"] = TestTokens.secret
        environment["PHOTOPREP_PUBLIC_URL"] = base
        let settings = environment
        let server = try await onThread { try PhotoServerProcess(environment: settings) }

        // The shipped site, on the test's ports and certificate, to the server's port.
        var site = try String(contentsOf: Self.deploy.appendingPathComponent("nginx-photoprep.conf"), encoding: .utf8)
        for (shipped, here) in [
            ("server 127.0.0.1:8080;", "server 127.0.0.1:\(server.port);"),
            ("listen 443 ssl http2;", "listen 127.0.0.1:\(tlsPort) ssl http2;"),
            ("listen 80;", "listen 127.0.0.1:\(plainPort);"),
            ("/etc/letsencrypt/live/uploads.example.com/fullchain.pem", certificate),
            ("/etc/letsencrypt/live/uploads.example.com/privkey.pem", key),
        ] {
            try #require(site.contains(shipped), "the site says \(shipped)")
            site = site.replacingOccurrences(of: shipped, with: here)
        }
        site = site.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("listen [::]") }.joined(separator: "\n")
        try site.write(to: folder.appendingPathComponent("site.conf"), atomically: true, encoding: .utf8)
        let configuration = folder.appendingPathComponent("nginx.conf")
        try """
            daemon off;
            \(geteuid() == 0 ? "user root;" : "")
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                include \(folder.path)/site.conf;
            }
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let nginxArguments = ["-e", "\(folder.path)/error.log", "-p", folder.path, "-c", configuration.path]
        let checked = try await runSupportCommand("/usr/sbin/nginx", ["-t"] + nginxArguments)
        #expect(checked.status == 0 && checked.stderr.contains("test is successful"), "\(checked)")
        let nginx = try await onThread { try ServerProcess(port: tlsPort, executable: "/usr/sbin/nginx", arguments: nginxArguments) }
        defer { nginx.stop() }

        let health = try await ServeTLSTests.curl(["--cacert", certificate, "-w", "%{http_code} HTTP/%{http_version}", "\(base)/health"])
        #expect(health.stdout == "{\"status\":\"ok\",\"database\":\"ok\",\"storage\":\"ok\"}\n200 HTTP/2", "\(health)")
        let plain = try await ServeTLSTests.curl(["-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "http://127.0.0.1:\(plainPort)/health"])
        #expect(plain.stdout == "301 https://127.0.0.1/health", "plain HTTP is sent to HTTPS: \(plain)")

        // A tus upload through the proxy: its location on the public URL.
        let token = TestTokens.hs256(sub: "u1")
        let photo = folder.appendingPathComponent("storm.jpg")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        try Data(jpeg).write(to: photo)
        let tus = ["--cacert", certificate, "-H", "Tus-Resumable: 1.0.0", "-H", "Authorization: Bearer \(token)"]
        let created = try await ServeTLSTests.curl(tus + [
            "-X", "POST", "-D", "-", "-o", "/dev/null", "-H", "Upload-Length: \(jpeg.count)",
            "-H", "Upload-Metadata: \(ServeRulesTests.metadata("user_photos/u1/trip/proxied.jpg"))", "\(base)/files/",
        ])
        #expect(created.stdout.hasPrefix("HTTP/2 201"), "\(created)")
        let location = try #require(Self.header("location", in: created.stdout), "\(created)")
        #expect(location.hasPrefix("\(base)/files/"))

        // The body sent slowly and the client gone after 3 s: what nginx had passed on is the server's, and
        // the upload resumes from it (a proxy that buffered the body would have sent the server nothing).
        let patch = tus + ["-X", "PATCH", "-H", "Content-Type: application/offset+octet-stream"]
        let cut = try await runSupportCommand("curl", patch + ["-sS", "--max-time", "3", "--limit-rate", "32k", "-H", "Upload-Offset: 0", "--data-binary", "@\(photo.path)", location])
        #expect(cut.status == 28, "curl gave up mid-body: \(cut)")
        // Resumed as a tus client does: ask for the offset, send the rest from there. While the server still
        // holds the first request (nginx closing it may take a moment on a busy machine), 423 or 409 say to ask again.
        let rest = folder.appendingPathComponent("rest.bin")
        var (firstOffset, resumedFrom, answers): (Int?, Int?, [String]) = (nil, nil, [])
        try await waitUntil(seconds: 30) {
            let head = try Self.blockingCurl(tus + ["-I", location])
            guard let offset = Self.header("upload-offset", in: head).flatMap({ Int($0) }), offset > 0 else { return false }
            if firstOffset == nil { firstOffset = offset }
            try Data(jpeg[offset...]).write(to: rest)
            let answer = try Self.blockingCurl(patch + ["-D", "-", "-o", "/dev/null", "-H", "Upload-Offset: \(offset)", "--data-binary", "@\(rest.path)", location])
            answers.append(String(answer.prefix { $0 != "\r" }))
            guard answer.hasPrefix("HTTP/2 204") else { return false }
            #expect(Self.header("upload-offset", in: answer) == String(jpeg.count), "\(answer)")
            resumedFrom = offset
            return true
        }
        _ = try #require(resumedFrom, "\(answers)")
        // What the server held when the client came back (a resend whose answer was lost may finish it later).
        let kept = try #require(firstOffset)
        #expect(kept > 0 && kept < jpeg.count, "held byte \(kept) of \(jpeg.count) after the cut")
        _ = try checkNormalised(server.stored("user_photos/u1/trip/proxied.jpg"), preset: .photo, portrait: false)
    }

    /// The shipped environment file as systemd reads it: `NAME=value` lines, comments and blank lines skipped.
    static func environmentFile() throws -> [String: String] {
        let text = try String(contentsOf: deploy.appendingPathComponent("photoprep.env"), encoding: .utf8)
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }

    static func header(_ name: String, in response: String) -> String? {
        response.split(separator: "\r\n").first { $0.lowercased().hasPrefix("\(name):") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    /// curl waited for on this thread (`waitUntil` polls synchronously): its standard output.
    static func blockingCurl(_ arguments: [String]) throws -> String {
        try runSupportCommandBlocking("curl", ["-sS", "--max-time", "10"] + arguments).stdout
    }
}
