import Hummingbird

/// `GET /v1/quarantine`.
struct QuarantinePage: ResponseEncodable {
    var photos: [QuarantinedPhotoBody]
}
