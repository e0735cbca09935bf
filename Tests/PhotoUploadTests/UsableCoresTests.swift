import Foundation
@testable import PhotoFiles
import Testing
import TestSupport

/// The cores a process may run on — its affinity mask, not the machine's count — which the server sizes its
/// event loops by.
@Suite struct UsableCoresTests {
    @Test func theMaskInProcStatusIsCounted() {
        #expect(UsableCores.allowed(inStatus: "Name:\tx\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n") == 1)
        #expect(UsableCores.allowed(inStatus: "Cpus_allowed:\tff,ffffffff\n") == 40)
        #expect(UsableCores.allowed(inStatus: "Cpus_allowed:\t00000000,0000000a\n") == 2)
        #expect(UsableCores.allowed(inStatus: "Cpus_allowed:\tzz\n") == nil)
        #expect(UsableCores.allowed(inStatus: "Name:\tx\n") == nil)
    }

    @Test func thisProcessCountsWhatNprocCounts() throws {
        let nproc = Process()
        nproc.executableURL = URL(fileURLWithPath: "/usr/bin/nproc")
        let out = Pipe()
        nproc.standardOutput = out
        try nproc.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        nproc.waitUntilExit()
        #expect(UsableCores.count == Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// `photoprep serve` started on one core (`taskset -c N`, N the first this process may use) runs one event
    /// loop, and says so.
    @Test func aServerOnOneCoreRunsOneEventLoop() async throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        let core = try #require(list.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }.nilIfEmpty)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cores-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        server.arguments = ["-c", String(core), photoprepBinary.path, "serve", "--port", "0", "--data", folder.path]
        server.environment = ProcessInfo.processInfo.environment.merging(["PHOTOPREP_JWT_SECRET": String(repeating: "k", count: 32)]) { $1 }
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try launch(server)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        // The first line: "photoprep serve: listening on … (data: …, event loops: N)".
        let line = try await onThread { () -> String in
            var bytes: [UInt8] = []
            while !bytes.contains(UInt8(ascii: "\n")), let chunk = try out.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty { bytes += chunk }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(line.contains("listening on http://") && line.hasSuffix("event loops: 1)\n"), "\(line)")
    }
}

extension Substring {
    fileprivate var nilIfEmpty: Substring? { isEmpty ? nil : self }
}
