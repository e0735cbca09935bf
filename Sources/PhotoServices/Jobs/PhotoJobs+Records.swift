/// What the database records of the jobs: a job's record and its outcome as an event, the unfinished jobs, the stale
/// objects.
extension PhotoJobs {
    /// The jobs that are not done.
    public func unfinished() async throws(ServiceError) -> [PhotoJob] {
        try await store.unfinished()
    }

    /// Objects that should be gone but could not be deleted yet, with why.
    public func staleObjects() async throws(ServiceError) -> [StaleObject] {
        try await intake.stale.all()
    }

    /// The terminal event that describes the job's recorded state.
    public static func outcome(of job: PhotoJob) -> PhotoJobEvent {
        switch job.state {
        case .done: .finished(url: job.url ?? "")
        case .failed: .failed(reason: job.error ?? "failed")
        case .cancelled: .cancelled
        case .uploading: .pending(reason: "being uploaded by \(job.leaseOwner ?? "another runner")")
        case .pending, .none:
            .pending(reason: job.error ?? job.waitsFor.map { "waiting until the server has group \($0)" } ?? "waiting to be uploaded")
        }
    }

    func record(_ id: String) async throws(ServiceError) -> PhotoJob {
        guard let job = try await store.job(id) else { throw .notFound("photo job \(id)") }
        return job
    }
}
