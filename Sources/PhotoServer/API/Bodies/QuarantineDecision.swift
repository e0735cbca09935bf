/// `POST /v1/quarantine/release` and `…/reject`: the key of the photo decided on, and for a rejection, why.
struct QuarantineDecision: Decodable {
    var key: String
    var reason: String?
}
