import Foundation
import HTTPTypes
import HummingbirdCore
import PhotoServices
@testable import PhotoServer
import Testing

/// The read path's small parts on their own: HTTP dates both ways, `Range` headers, percent-decoding
/// and the download URL's query.
@Suite struct MediaRoutesTests {
    @Test func httpDatesAreIMFFixdates() throws {
        // RFC 9110 §5.6.7's own example.
        let example = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.format(example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        // Every day and month name, single digits padded, fractions of a second dropped.
        for day in stride(from: 0.0, to: 400, by: 13) {
            let date = Date(timeIntervalSince1970: 1_700_000_000 + day * 86_400 + 3_661.75)
            let text = HTTPDate.format(date)
            #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == date.timeIntervalSince1970.rounded(.down), "\(text)")
        }
    }

    /// A recipient reads all three forms (RFC 9110 §5.6.7), and nothing else.
    @Test func httpDatesInTheOlderFormsAreRead() {
        let example = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == example, "RFC 850")
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == example, "asctime")
        #expect(HTTPDate.parse("Wed, 29 Feb 2012 23:59:60 GMT") == Date(timeIntervalSince1970: 1_330_560_000), "a leap day and a leap second")
        #expect(HTTPDate.parse("Mon, 01 Jan 1900 00:00:00 GMT") == Date(timeIntervalSince1970: -2_208_988_800))
        #expect(HTTPDate.parse("Thursday, 01-Jan-70 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Friday, 01-Jan-27 00:00:00 GMT") == Date(timeIntervalSince1970: 1_798_761_600), "two digits: 2027, not 1927")
        for bad in ["", "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 94 08:49:37", "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994 08:49 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func rangesAsRFC9110Says() {
        #expect(ByteRange.parse("bytes=0-99", size: 1000) == .part(0...99))
        #expect(ByteRange.parse("bytes=990-", size: 1000) == .part(990...999))
        #expect(ByteRange.parse("bytes=-10", size: 1000) == .part(990...999))
        #expect(ByteRange.parse("bytes=-5000", size: 1000) == .part(0...999))
        #expect(ByteRange.parse("bytes=900-5000", size: 1000) == .part(900...999))
        #expect(ByteRange.parse("bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=5-1", size: 1000) == .whole, "invalid: ignored")
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 1000) == .whole, "several: the whole")
        #expect(ByteRange.parse("items=0-1", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=a-b", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=٣-٤", size: 1000) == .whole, "ASCII digits only")
    }

    @Test func percentDecodingAsFoundationDoes() {
        for encoded in ["group_photos/abc/photo.jpg", "a%2Fb", "%41%62%63", "caf%C3%A9", "%e2%82%ac", "", "%", "%4", "%G1", "a%2", "%FF", "100%25"] {
            #expect(MediaRoutes.percentDecoded(Substring(encoded).utf8) == encoded.removingPercentEncoding, "\(encoded)")
        }
    }

    @Test func theDownloadURLsQuery() {
        let query = MediaRoutes.Query("v=0123abcd&token=f00d&size=256&x=1")
        #expect(query.version == "0123abcd")
        #expect(query.token == "f00d")
        #expect(query.size == "256")
        let encoded = MediaRoutes.Query("size=%32%35%36&token=a%62&vv=2&sizes=9&v")
        #expect(encoded.size == "256")
        #expect(encoded.token == "ab")
        #expect(encoded.version == nil, "`vv=` and a bare `v` are not `v=`")
        let none = MediaRoutes.Query(nil)
        #expect(none.version == nil && none.token == nil && none.size == nil)
        #expect(MediaRoutes.Query("token=&v=1").token == "")
        #expect(MediaRoutes.Query("token=%zz").token == nil, "a malformed escape is no token")
    }
}

/// Answers that ask the client to try again say when.
@Suite struct RetryAfterTests {
    @Test func every429And503SaysWhenToTryAgain() {
        #expect(Problem(.storage("the bucket did not answer")).response.headers[.retryAfter] == "5")
        #expect(Problem(.tooManyRequests, "rate", "slow down").response.headers[.retryAfter] == "60")
        #expect(Problem(.notFound, "not-found", "no").response.headers[.retryAfter] == nil)
        #expect(Problem(.unprocessableContent, "photo", "no").response.headers[.retryAfter] == nil)
    }
}
