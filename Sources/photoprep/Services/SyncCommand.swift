import ArgumentParser
import PhotoBatch
import Foundation
import Logging
import PhotoServices
import ServiceLifecycle
import UnixSignals

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload the photos kept pending (destination unreachable, or a process that stopped half-way).",
        discussion: """
            Each photo is uploaded once: a photo another running process is uploading is left to it; \
            one whose process died continues from where its upload stopped.
            With --server URL: first the groups created while that server was unreachable are sent \
            (oldest first, each with the id it was given, so the server creates it once however often \
            it is sent), then the photos — a group's photo only once the server has the group.
            Exit status: 0 nothing left, 1 some groups or photos are still pending, refused or failed.
            """)

    @Flag(help: "Also retry photos that failed or were cancelled.")
    var retryFailed = false

    @OptionGroup var service: ServiceOptions

    func run() async throws {
        if let client = try await service.client() {
            try await retry(client.jobs)
            let before = try await pendingCount(client.jobs)
            let synced = await client.sync()
            let sentIds = Set(synced.groups.map(\.id))
            let unsent = try await serviceCall { try await client.pendingGroups() }.filter { $0.state == .pending && !sentIds.contains($0.id) }
            var left = unsent.count
            for group in synced.groups {
                let label = "group \(group.id) \"\(group.name)\""
                if service.json {
                    printJSONLine(CreationLine(group: group.id, name: group.name, state: group.state.rawValue, reason: group.error))
                } else if group.state == .created {
                    print("\(label): created on the server")
                } else {
                    StandardStream.error.write("\(label): \(group.state.rawValue) — \(group.error ?? "")\n")
                }
                if group.state != .created { left += 1 }
            }
            left += report(synced.photos, before: before) + (await reportStale(client.jobs))
            if !service.json {
                let created = synced.groups.filter { $0.state == .created }.count
                print("\(created) of \(synced.groups.count + unsent.count) pending groups created")
            }
            if left > 0 { throw ExitCode(1) }
            return
        }
        let services = try await service.services()
        try await retry(services.jobs)
        // Each photo goes where it was headed when its job was made (`--to` then, or the default): without
        // --to, one pass for each destination the waiting jobs name; with it, that destination's only.
        let unfinished = try await serviceCall { try await services.jobs.unfinished() }.filter { $0.state == .pending || $0.state == .uploading }
        let elsewhere = Set(unfinished.compactMap(\.destination)).subtracting([services.jobs.store.destination].compactMap { $0 }).sorted()
        var passes = [services]
        var left = 0
        if service.to == nil {
            for destination in elsewhere { passes.append(try await service.services(to: destination)) }
        } else if !elsewhere.isEmpty {
            left = unfinished.count { !services.jobs.store.runs($0) }
            StandardStream.error.write("\(left) pending photo(s) go elsewhere (\(elsewhere.joined(separator: ", "))): run 'photoprep sync' without --to\n")
        }
        // A job runner for each as services, until nothing is left; SIGTERM or SIGINT pause the uploads and
        // keep every job resumable (the next sync, or any server's runner, continues it where it stopped).
        let group = ServiceGroup(
            configuration: .init(
                services: passes.map { .init(service: PhotoJobRunner(jobs: $0.jobs, mode: .untilIdle), successTerminationBehavior: .ignore) },
                gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: Logger(label: "photoprep.sync")))
        try await group.run()
        var after: [PhotoJob] = []
        for job in unfinished where passes.contains(where: { $0.jobs.store.runs(job) }) {
            if let now = try await serviceCall({ try await services.jobs.store.job(job.id) }) { after.append(now) }
        }
        left += report(after, before: after.count) + (await reportStale(services.jobs))
        if left > 0 { throw ExitCode(1) }
    }

    /// Objects that should be gone (replaced profile pictures) and could not be deleted: said, kept for the next sync.
    private func reportStale(_ jobs: PhotoJobs) async -> Int {
        let stale = (try? await jobs.staleObjects()) ?? []
        for object in stale {
            StandardStream.error.write(
                "replaced picture \(object.url) not deleted yet (\(object.attempts) attempts): \(object.error) — the next sync tries again\n")
        }
        return stale.count
    }

    private func retry(_ jobs: PhotoJobs) async throws {
        guard retryFailed else { return }
        for job in try await serviceCall({ try await jobs.unfinished() }) where job.state == .failed || job.state == .cancelled {
            try await serviceCall { try await jobs.retry(job.id) }
        }
    }

    private func pendingCount(_ jobs: PhotoJobs) async throws -> Int {
        try await serviceCall { try await jobs.unfinished() }.filter { $0.state == .pending || $0.state == .uploading }.count
    }

    /// Prints each photo's outcome; returns how many are not uploaded.
    private func report(_ jobs: [PhotoJob], before: Int) -> Int {
        var left = 0
        for job in jobs {
            let label = "\(job.kind.rawValue) photo \(job.key)"
            if service.json {
                printJSONLine(JobLine(job: job.id, label: label, event: PhotoJobs.outcome(of: job)))
            } else if job.state == .done {
                print("\(label): uploaded → \(job.url ?? "")")
            } else {
                StandardStream.error.write("\(label): \(job.state.rawValue)\(job.error.map { " — \($0)" } ?? "")\n")
            }
            if job.state != .done { left += 1 }
        }
        if !service.json { print("\(jobs.count - left) of \(before) pending photos uploaded") }
        return left
    }

    struct CreationLine: Encodable {
        var event = "group"
        var group: String
        var name: String
        var state: String
        var reason: String?
    }
}
