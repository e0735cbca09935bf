/// `POST /v1/quarantine/release`: the key of the photo to release.
struct ReleasePhoto: Decodable {
    var key: String
}
