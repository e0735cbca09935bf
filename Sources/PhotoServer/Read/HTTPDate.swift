import Foundation
import Synchronization

/// HTTP dates (IMF-fixdate, RFC 9110 §5.6.7).
enum HTTPDate {
    /// Formatted by hand from `gmtime_r` (a `DateFormatter` is costly to make, and not safe to share),
    /// and kept: the same photos' dates are formatted again and again.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        if let known = formatted.withLock({ $0[seconds] }) { return known }
        let text = formatNow(seconds)
        formatted.withLock { known in
            if known.count >= 4096 { known.removeAll(keepingCapacity: true) }
            known[seconds] = text
        }
        return text
    }
    private static let formatted = Mutex<[Int: String]>([:])

    private static func formatNow(_ whole: Int) -> String {
        var seconds = time_t(whole)
        var t = tm()
        gmtime_r(&seconds, &t)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][Int(t.tm_wday)]
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(t.tm_mon)]
        return "\(day), \(two(t.tm_mday)) \(month) \(t.tm_year + 1900) \(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }
    /// An HTTP date in any of the three forms a recipient must read (RFC 9110 §5.6.7) — IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850's (`Sunday, 06-Nov-94 08:49:37 GMT`) and C's `asctime`
    /// (`Sun Nov  6 08:49:37 1994`) — or nil. Read by hand: a `DateFormatter` made for each request cost more than
    /// the rest of the answer, and Glibc's `strptime` is not in Swift's view of it.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" })
        let (day, month, year, clock): (Substring, Substring, Substring, ArraySlice<Substring>)
        switch fields.count {
        case 8 where fields[7] == "GMT": (day, month, year, clock) = (fields[1], fields[2], fields[3], fields[4...6])
        case 7: (day, month, year, clock) = (fields[2], fields[1], fields[6], fields[3...5])
        default: return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields[0].allSatisfy(\.isLetter), let m = months.firstIndex(where: { $0 == month }), let d = Int(day), (1...31).contains(d),
            var y = Int(year), year.count == 2 || year.count == 4, let h = Int(clock[clock.startIndex]), let mi = Int(clock[clock.startIndex + 1]),
            let sec = Int(clock[clock.startIndex + 2]), (0...23).contains(h), (0...59).contains(mi), (0...60).contains(sec)
        else { return nil }
        if year.count == 2 { y += y < 70 ? 2000 : 1900 }  // RFC 850: a year more than 50 years ahead is in the past
        // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
        let march = m < 2 ? y - 1 : y  // years counted from March
        let era = (march >= 0 ? march : march - 399) / 400
        let yearOfEra = march - era * 400
        let dayOfYear = (153 * (m < 2 ? m + 10 : m - 2) + 2) / 5 + d - 1
        let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + h * 3600 + mi * 60 + sec))
    }
}
