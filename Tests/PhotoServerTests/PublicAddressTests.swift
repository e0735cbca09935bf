import HTTPTypes
import Testing
@testable import PhotoServer

/// The URLs the server hands out are built on the request's `Host` only when it is a host: a header that could end the
/// URL, the `Location` header or an HTML attribute gives a relative URL instead.
@Suite struct PublicAddressTests {
    @Test(arguments: ["photos.example.com", "127.0.0.1:8080", "localhost", "[::1]:443", "[2001:db8::1]", "a-b.example:1"])
    func hostsAreUsed(host: String) {
        let address = PublicAddress(publicURL: nil, scheme: "http")
        let request = HTTPRequest(method: .post, scheme: "http", authority: host, path: "/files/")
        #expect(address.url("/files/abc", request: request) == "http://\(host)/files/abc")
        #expect(address.base(request) == "http://\(host)")
    }

    @Test(arguments: ["a\"b<script>", "", "evil.example/x", "u@evil.example", "a b", "host:port", "host:123456", "[::1", "[zz]", "é.example", "a.example:"])
    func anythingElseGivesARelativeURL(host: String) {
        let address = PublicAddress(publicURL: nil, scheme: "http")
        let request = HTTPRequest(method: .post, scheme: "http", authority: host, path: "/files/")
        #expect(address.url("/files/abc", request: request) == "/files/abc")
        #expect(address.base(request) == "http://localhost")
    }
}
