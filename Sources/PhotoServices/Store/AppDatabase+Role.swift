extension AppDatabase {
    /// Who uses the database, and so which tables it has.
    public enum Role: String, Sendable {
        /// The embedded services (the commands on one machine): their records and the photo jobs.
        case services
        /// `photoprep serve`: the services' records and the photo jobs (its own tables, the uploads in progress shared by
        /// instances, are the server's to add: `also:`).
        case server
        /// A client of `photoprep serve`: the groups it created while offline and its photo jobs; the server records the rest.
        case client

        var migrations: [Schema.Migration] {
            switch self {
            case .services: Schema.services + Schema.jobs
            case .server: Schema.services + Schema.jobs
            case .client: Schema.client + Schema.jobs
            }
        }
    }
}
