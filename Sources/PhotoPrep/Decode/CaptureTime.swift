/// When a photo was taken, as its EXIF says: `DateTimeOriginal` ("2024:06:01 14:03:22", the camera's local time)
/// with `OffsetTimeOriginal` ("+02:00", that clock's offset from UTC). Only a whole, valid date with its offset is one:
/// a local time without an offset is no instant (the same text is another moment in each time zone), and year 0000,
/// a 31 February or a blank field is what cameras write when they do not know. Such a value gives no `CaptureTime`,
/// never an error.
public struct CaptureTime: Sendable, Equatable {
    public var year, month, day, hour, minute, second: Int
    /// The local clock's offset from UTC, in minutes (east positive).
    public var offsetMinutes: Int

    /// Reads the two EXIF fields (their ASCII, without the terminating NUL); nil unless both are valid.
    init?(dateTime: String, offset: String) {
        let d = Array(dateTime.utf8), o = Array(offset.utf8)
        guard d.count >= 19, o.count == 6 else { return nil }
        func number(_ bytes: ArraySlice<UInt8>) -> Int? {
            guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        let colon = UInt8(ascii: ":")
        guard d[4] == colon, d[7] == colon, d[10] == UInt8(ascii: " ") || d[10] == UInt8(ascii: "T"), d[13] == colon, d[16] == colon,
            d[19...].allSatisfy({ $0 == 0 || $0 == 0x20 }),
            let year = number(d[0..<4]), let month = number(d[5..<7]), let day = number(d[8..<10]),
            let hour = number(d[11..<13]), let minute = number(d[14..<16]), let second = number(d[17..<19]),
            o[0] == UInt8(ascii: "+") || o[0] == UInt8(ascii: "-"), o[3] == colon,
            let offsetHours = number(o[1..<3]), let offsetMinutes = number(o[4..<6])
        else { return nil }
        guard year >= 1, (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day), hour < 24, minute < 60, second < 60,
            offsetHours <= 14, offsetMinutes < 60
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        self.offsetMinutes = (o[0] == UInt8(ascii: "-") ? -1 : 1) * (offsetHours * 60 + offsetMinutes)
    }

    /// ISO 8601 with the offset it was taken at: `2024-06-01T14:03:22+02:00`.
    public var iso8601: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = String(repeating: "0", count: max(0, 4 - String(self.year).count)) + String(self.year)
        let sign = offsetMinutes < 0 ? "-" : "+", offset = abs(offsetMinutes)
        return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))\(sign)\(two(offset / 60)):\(two(offset % 60))"
    }

    /// The instant, in seconds since 1970-01-01T00:00:00Z.
    public var secondsSince1970: Int {
        // Days from the civil date (Howard Hinnant's algorithm), proleptic Gregorian.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
