import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

/// `PUT …/photo/focus`: the point the photo's square thumbnails are centred on, as Mastodon's `focus` (`x,y`, each −1…1);
/// null for the attention rule's choice.
struct SetFocus: Decodable {
    var focus: String?

    /// The focal point asked for (nil: none), or 422 naming the field.
    func point() throws -> FocalPoint? {
        guard let focus else { return nil }
        guard let point = FocalPoint(parsing: focus) else {
            throw Problem(.unprocessableContent, "focus", "focus: \(FocalPoint.expected), or null", field: "focus")
        }
        return point
    }
}
