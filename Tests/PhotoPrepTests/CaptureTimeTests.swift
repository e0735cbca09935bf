import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// The capture time is read from the EXIF of every format before the metadata is dropped, reported, and never
/// written to the output; odd values give none.
@Suite struct CaptureTimeTests {
    @Test(arguments: [
        ("metadata/taken.jpg", "2024-06-01T14:03:22+02:00"), ("metadata/taken.png", "2024-06-01T14:03:22+02:00"),
        ("metadata/taken.webp", "2024-06-01T14:03:22+02:00"), ("metadata/taken.heic", "2024-06-01T14:03:22+02:00"),
        ("metadata/taken-west.jpg", "1999-12-31T23:59:59-08:00"),
    ])
    func eachFormatsCaptureTimeIsReportedAndNotKept(file: String, expected: String) throws {
        for passThrough in [true, false] {
            var options = PrepareOptions(preset: .group)
            options.allowPassThrough = passThrough
            let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
            #expect(photo.report.takenAt == expected, "\(file)")
            // Not in the stored file: neither the date's text nor any EXIF at all.
            let exifDate = Array(expected.prefix(10).replacingOccurrences(of: "-", with: ":").utf8)
            #expect(!photo.jpeg.contains(exifDate), "\(file): the capture time was written out")
            #expect(try JPEGStructure.parse(photo.jpeg).exif == nil)
        }
    }

    @Test(arguments: ["metadata/no-offset.jpg", "metadata/year-zero.jpg", "metadata/garbage.jpg", "metadata/february-30.jpg", "photos/storm-1920x1280.jpg"])
    func oddOrMissingValuesGiveNone(file: String) throws {
        let photo = try PhotoPipeline(options: PrepareOptions(preset: .group)).prepare(contentsOf: Fixture.path(file))
        #expect(photo.report.takenAt == nil, "\(file)")
        #expect(photo.report.outputBytes > 0)
    }

    @Test func theInstantIsTheLocalTimeLessItsOffset() throws {
        let formatter = ISO8601DateFormatter()
        for (date, offset) in [("2024:06:01 14:03:22", "+02:00"), ("1999:12:31 23:59:59", "-08:00"), ("2000:02:29 00:00:00", "+05:30"), ("1970:01:01 00:00:00", "+00:00")] {
            let time = try #require(CaptureTime(dateTime: date, offset: offset))
            let foundation = try #require(formatter.date(from: time.iso8601))
            #expect(Double(time.secondsSince1970) == foundation.timeIntervalSince1970, "\(date) \(offset)")
        }
        #expect(CaptureTime(dateTime: "2024:06:01 14:03:22", offset: "+02:00")?.iso8601 == "2024-06-01T14:03:22+02:00")
    }

    @Test(arguments: [
        ("2023:02:29 10:00:00", "+01:00"), ("2024:13:01 10:00:00", "+01:00"), ("2024:06:01 24:00:00", "+01:00"), ("0000:00:00 00:00:00", "+00:00"),
        ("2024:06:01 14:03:22", "+15:00"), ("2024:06:01 14:03:22", "02:00"), ("2024:06:01 14:03:22", ""), ("    :  :     :  :  ", "+00:00"),
        ("2024-06-01", "+01:00"), ("2024:06:01 14:03:22", "+2h:00"), ("2024:06:01 14:03:22x", "+01:00"),
    ])
    func invalidValuesAreNone(date: String, offset: String) {
        #expect(CaptureTime(dateTime: date, offset: offset) == nil, "\(date) \(offset)")
    }
}
