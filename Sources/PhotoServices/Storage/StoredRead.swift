public import Foundation

/// How a stored object is read: from a file on this machine, or by a redirect to a short-lived URL the
/// bucket serves itself.
public enum StoredRead: Sendable, Equatable {
    case file(path: String)
    case redirect(URL)
    /// The location is not one this storage holds.
    case missing
}
