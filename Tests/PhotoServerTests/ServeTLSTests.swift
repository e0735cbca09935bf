import Foundation
import Testing
import TestSupport

/// `serve --tls-cert --tls-key` against the built server, with a self-signed certificate made by openssl
/// and curl as the client (an implementation other than the server's NIOSSL): HTTPS answered, HTTP/2
/// negotiated, a certificate the client does not trust refused, plain HTTP unanswered on the TLS port,
/// upload locations on https, and the files read again on SIGHUP.
@Suite struct ServeTLSTests {
    @Test func httpsWithTheCertificateReadAgainOnSIGHUP() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = (folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path)
        let first = folder.appendingPathComponent("first.pem").path
        try await Self.selfSigned(certificate: certificate, key: key)
        try FileManager.default.copyItem(atPath: certificate, toPath: first)
        let server = try await onThread { try PhotoServerProcess(arguments: ["--tls-cert", certificate, "--tls-key", key]) }
        let base = "https://127.0.0.1:\(server.port)"
        #expect(server.log.contains("listening on https://127.0.0.1:\(server.port)"))

        let health = try await Self.curl(["--cacert", certificate, "-w", "%{http_code} HTTP/%{http_version}", "\(base)/health"])
        #expect(health.status == 0 && health.stdout == "{\"status\":\"ok\",\"database\":\"ok\",\"storage\":\"ok\"}\n200 HTTP/2", "\(health)")
        let http1 = try await Self.curl(["--http1.1", "--cacert", certificate, "-o", "/dev/null", "-w", "%{http_code} HTTP/%{http_version}", "\(base)/health"])
        #expect(http1.stdout == "200 HTTP/1.1", "clients without HTTP/2 get HTTP/1.1: \(http1)")
        let untrusted = try await Self.curl(["\(base)/health"])
        #expect(untrusted.status == 60, "curl refuses a certificate it cannot verify: \(untrusted)")
        let plain = try await Self.curl(["-w", "%{http_code}", "http://127.0.0.1:\(server.port)/health"])
        #expect(plain.status != 0 && plain.stdout == "000", "no HTTP answer to plain HTTP: \(plain)")

        // Upload locations the server builds from the request's Host say https (no --public-url here); over HTTP/2.
        let created = try await Self.curl([
            "--cacert", certificate, "-X", "POST", "-D", "-", "-o", "/dev/null", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 10",
            "-H", "Upload-Metadata: \(ServeRulesTests.metadata("user_photos/u1/a/tls.jpg"))", "-H", "Authorization: Bearer \(TestTokens.hs256(sub: "u1"))",
            "\(base)/files/",
        ])
        #expect(created.stdout.hasPrefix("HTTP/2 201"), "\(created)")
        #expect(created.stdout.lowercased().contains("location: \(base)/files/"), "\(created)")

        // A new certificate (another key) in the same files: served to new connections once SIGHUP says so.
        let before = try await Self.fingerprint(file: first)
        #expect(before.hasPrefix("sha256 Fingerprint="), "\(before)")
        #expect(try await Self.servedFingerprint(server.port) == before)
        try await Self.selfSigned(certificate: certificate, key: key)
        let renewed = try await Self.fingerprint(file: certificate)
        #expect(renewed != before)
        #expect(try await Self.servedFingerprint(server.port) == before, "not before SIGHUP")
        kill(server.process.processIdentifier, SIGHUP)
        try await waitUntil { server.log.contains("SIGHUP: TLS certificate read again") }
        #expect(try await Self.servedFingerprint(server.port) == renewed)
        #expect(try await Self.curl(["--cacert", certificate, "-o", "/dev/null", "\(base)/health"]).status == 0)
        #expect(try await Self.curl(["--cacert", first, "-o", "/dev/null", "\(base)/health"]).status == 60, "the first certificate is gone")
        #expect(server.log.contains("SIGHUP: key files read again"), "the one SIGHUP reached the key files' reloader too")

        // A key that is not the certificate's changes nothing.
        _ = try await runSupportCommand("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", key])
        kill(server.process.processIdentifier, SIGHUP)
        try await waitUntil { server.log.contains("SIGHUP: TLS certificate not read again") }
        #expect(try await Self.servedFingerprint(server.port) == renewed)
        #expect(try await Self.curl(["--cacert", certificate, "-o", "/dev/null", "\(base)/health"]).status == 0)
    }

    /// A connection that never completes its handshake is closed (a slow-loris on the TLS port); one that did
    /// is not cut by the deadline.
    @Test func aHandshakeNotCompletedInTimeIsClosed() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = (folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path)
        try await Self.selfSigned(certificate: certificate, key: key)
        let server = try await onThread {
            try PhotoServerProcess(arguments: ["--tls-cert", certificate, "--tls-key", key, "--tls-handshake-timeout", "5"])
        }
        // 5 s: a real handshake on a loaded machine must fit in it with room to spare (with 1 s, one did not).
        let started = Date()
        let silent = try RawConnection(port: server.port)
        let received = try await silent.receive(timeout: 60)
        let closedAfter = Date().timeIntervalSince(started)
        #expect(received.isEmpty && closedAfter > 4.5 && closedAfter < 30, "closed after \(closedAfter) s")
        // Handshake done, then 7 s (past the deadline) before the request: answered.
        let script = """
            import socket, ssl, sys, time
            context = ssl.create_default_context(cafile=sys.argv[1])
            connection = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[2]))), server_hostname="localhost")
            time.sleep(7)
            connection.sendall(b"GET /health HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
            print(connection.recv(4096).decode().split("\\r\\n")[0])
            """
        let late = try await runSupportCommand("python3", ["-c", script, certificate, String(server.port)])
        #expect(late.stdout == "HTTP/1.1 200 OK\n", "\(late)")
    }

    /// A port another process listens on: said with the address, not NIO's words for the system call.
    @Test func aPortInUseIsNamed() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let listener = try LoopbackListener()
        let port = listener.port
        let serve = try BackgroundCommand(["serve", "--data", folder.path, "--port", String(port)], environment: ["PHOTOPREP_JWT_SECRET": TestTokens.secret])
        let result = try #require(await serve.wait(timeout: 30))
        #expect(result.status == 1 && result.stderr.contains("cannot listen on 127.0.0.1:\(port): Address already in use"), "\(result.stderr)")
        let wrong = try await photoprep(["serve", "--data", folder.path, "--port", "99999"])
        #expect(wrong.status == 2 && wrong.stderr.contains("--port: not a port number"), "\(wrong.stderr)")
        withExtendedLifetime(listener) {}
    }

    @Test func aCertificateWithoutItsKeyIsRefused() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try BackgroundCommand(
            ["serve", "--data", folder.path, "--port", "0", "--tls-cert", folder.appendingPathComponent("cert.pem").path],
            environment: ["PHOTOPREP_JWT_SECRET": TestTokens.secret])
        let result = await serve.wait(timeout: 30)
        #expect(result.map { $0.status != 0 && $0.stderr.contains("--tls-cert needs --tls-key") } == true, "\(String(describing: result))")
    }

    /// A new self-signed certificate for 127.0.0.1 and localhost, with a new P-256 key, written to the two paths.
    static func selfSigned(certificate: String, key: String) async throws {
        let made = try await runSupportCommand("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", certificate,
        ])
        guard made.status == 0 else { throw TestSetupError(message: "openssl req: \(made.stderr)") }
    }

    /// curl, quiet but for errors, giving up after 10 s.
    static func curl(_ arguments: [String]) async throws -> CommandResult {
        try await runSupportCommand("curl", ["-sS", "--max-time", "10"] + arguments)
    }

    static func fingerprint(file: String) async throws -> String {
        try await runSupportCommand("openssl", ["x509", "-in", file, "-noout", "-fingerprint", "-sha256"]).stdout
    }

    /// The fingerprint of the certificate a new connection to the server is shown.
    static func servedFingerprint(_ port: Int) async throws -> String {
        try await runSupportCommand("sh", ["-c", "openssl s_client -connect 127.0.0.1:\(port) </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"]).stdout
    }
}
