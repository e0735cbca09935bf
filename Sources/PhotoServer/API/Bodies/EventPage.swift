import Hummingbird

/// `GET /v1/events`.
struct EventPage: ResponseEncodable {
    var events: [EventBody]
}
