import Foundation

/// What a name people read (a group's name, a user's display name) may contain. Names end up in
/// system messages, notifications and terminals, so nothing in them may steer how text is shown.
///
/// | input | stored |
/// |---|---|
/// | `"  Hiking club \n"` | `"Hiking club"` (trimmed) |
/// | `"Eve\n[admin] Ben: hi\e[31m"` | `"Eve[admin] Ben: hi[31m"` (control characters removed) |
/// | `"\u{202E}olleh"` | `"olleh"` (bidirectional overrides and invisible format characters removed) |
/// | `"\u{202E}"`, `"\u{200B} "` | refused: nothing visible |
/// | `"👨‍👩‍👧"` | kept (the zero-width joiners inside an emoji sequence stay) |
public enum NameRules {
    public static let maxDisplayNameLength = 100
    /// The most Unicode scalars one character (a grapheme cluster) of a name may have: a family emoji has 7, a
    /// subdivision flag 7, a letter with its accents a few. Lengths count characters, so without this bound one
    /// "character" — a letter under 60,000 combining marks — made a 120 KB name that every member then downloads.
    public static let maxScalarsPerCharacter = 16

    /// `name` without control characters (C0, C1, DEL) or format characters (bidirectional controls
    /// U+202A–U+202E and U+2066–U+2069, U+200B, U+FEFF …; U+200D and emoji tag characters stay), trimmed
    /// of white space; nil when nothing visible is left.
    public static func cleaned(_ name: String) -> String? {
        let kept = name.unicodeScalars.filter { scalar in
            switch scalar.properties.generalCategory {
            case .control: false
            case .format: scalar.value == 0x200D || (0xE0020...0xE007F).contains(scalar.value)
            default: true
            }
        }
        let trimmed = String(String.UnicodeScalarView(kept)).trimmingCharacters(in: .whitespacesAndNewlines)
        let visible = trimmed.unicodeScalars.contains { scalar in
            !scalar.properties.isWhitespace && !scalar.properties.isDefaultIgnorableCodePoint
                && ![.control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
        }
        return visible ? trimmed : nil
    }

    /// A user's display name as stored: cleaned, 1–100 characters.
    public static func displayName(_ name: String) throws(ServiceError) -> String {
        guard let cleaned = cleaned(name) else { throw .invalidName("the display name \(name.debugDescription) has no visible character") }
        guard cleaned.count <= maxDisplayNameLength else {
            throw .invalidName("the display name has \(cleaned.count) characters; at most \(maxDisplayNameLength) are allowed")
        }
        try checkCharacters(cleaned, "the display name")
        return cleaned
    }

    /// Refuses a name with a character of more than `maxScalarsPerCharacter` Unicode scalars, as `refusal` words it.
    static func checkCharacters(_ name: String, _ what: String, refusal: (String) -> ServiceError = ServiceError.invalidName) throws(ServiceError) {
        guard let heavy = name.first(where: { $0.unicodeScalars.count > maxScalarsPerCharacter }) else { return }
        throw refusal("\(what) has a character of \(heavy.unicodeScalars.count) Unicode scalars; at most \(maxScalarsPerCharacter) are allowed")
    }
}
