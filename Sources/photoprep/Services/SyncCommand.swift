import ArgumentParser
import Foundation
import PhotoServices

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload the photos kept pending (destination unreachable, or a process that stopped half-way).",
        discussion: """
            Each photo is uploaded once: a photo another running process is uploading is left to it; \
            one whose process died continues from where its upload stopped.
            Exit status: 0 nothing left, 1 some photos are still pending or failed.
            """)

    @Flag(help: "Also retry photos that failed or were cancelled.")
    var retryFailed = false

    @OptionGroup var service: ServiceOptions

    func run() async throws {
        let services = try service.services()
        if retryFailed {
            for job in try serviceCall({ try services.jobs.unfinished() }) where job.state == .failed || job.state == .cancelled {
                try serviceCall { try services.jobs.retry(job.id) }
            }
        }
        let before = try serviceCall { try services.jobs.unfinished() }.filter { $0.state == .pending || $0.state == .uploading }
        let jobs = await services.jobs.sync()
        var left = 0
        for job in jobs {
            let label = "\(job.kind.rawValue) photo \(job.key)"
            if service.json {
                printJSONLine(JobLine(job: job.id, label: label, event: PhotoJobs.outcome(of: job)))
            } else if job.state == .done {
                print("\(label): uploaded → \(job.url ?? "")")
            } else {
                FileHandle.standardError.write(Data("\(label): \(job.state.rawValue)\(job.error.map { " — \($0)" } ?? "")\n".utf8))
            }
            if job.state != .done { left += 1 }
        }
        if !service.json { print("\(jobs.count - left) of \(before.count) pending photos uploaded") }
        if left > 0 { throw ExitCode(1) }
    }
}
