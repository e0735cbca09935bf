import Foundation
import PhotoFiles
import Testing
@testable import PhotoUpload

/// The signer against AWS's published vectors: the SigV4 test suite (get-vanilla family: access key
/// AKIDEXAMPLE, 2015-08-30T12:36:00Z, us-east-1, service "service") and the examples of the Amazon S3 API
/// reference ("Signature Calculations for the Authorization Header" and "… Query Parameters").
@Suite struct SigV4Tests {
    static let suite = SigV4(
        credentials: .init(accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1", service: "service")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 20150830T123600Z
    static let s3 = SigV4(
        credentials: .init(accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 20130524T000000Z

    func authorization(_ headers: [(String, String)]) -> String? { headers.first { $0.0 == "Authorization" }?.1 }

    @Test(arguments: [
        ("GET", "https://example.amazonaws.com/", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        ("GET", "https://example.amazonaws.com/?Param2=value2&Param1=value1", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        ("POST", "https://example.amazonaws.com/", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
    ])
    func testSuiteVectors(method: String, url: String, signature: String) {
        let headers = Self.suite.sign(method: method, url: URL(string: url)!, payloadHash: SigV4.emptyPayloadHash, date: Self.suiteDate)
        #expect(headers.first { $0.0 == "x-amz-date" }?.1 == "20150830T123600Z")
        #expect(authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=\(signature)")
    }

    @Test func getVanillaIntermediateSteps() {
        let canonical = "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(SigV4.emptyPayloadHash)"
        let stringToSign = SigV4.stringToSign(canonical, stamp: "20150830T123600Z", scope: "20150830/us-east-1/service/aws4_request")
        #expect(stringToSign.hasSuffix("\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"))
        #expect(Self.suite.signature(of: stringToSign, day: "20150830") == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    @Test func s3GetObjectWithRange() {
        let headers = Self.s3.sign(
            method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, headers: [("Range", "bytes=0-9")],
            payloadHash: SigV4.emptyPayloadHash, date: Self.s3Date)
        #expect(authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func s3PutObjectWithAnEncodedKey() {
        let payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"  // "Welcome to Amazon S3."
        #expect(hex(sha256(Array("Welcome to Amazon S3.".utf8))) == payload)
        let headers = Self.s3.sign(
            method: "PUT", url: URL(string: "https://examplebucket.s3.amazonaws.com/test%24file.text")!,
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payloadHash: payload, date: Self.s3Date)
        #expect(authorization(headers)?.hasSuffix("SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true)
    }

    @Test(arguments: [
        ("https://examplebucket.s3.amazonaws.com/?lifecycle", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
        ("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
    ])
    func s3QueryStrings(url: String, signature: String) {
        let headers = Self.s3.sign(method: "GET", url: URL(string: url)!, payloadHash: SigV4.emptyPayloadHash, date: Self.s3Date)
        #expect(authorization(headers)?.hasSuffix("Signature=\(signature)") == true)
    }

    @Test func s3PresignedURL() {
        let url = Self.s3.presign(method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, expires: 86400, date: Self.s3Date)
        #expect(url.absoluteString == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }
}
