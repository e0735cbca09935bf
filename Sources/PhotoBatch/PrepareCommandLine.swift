import PhotoPrep

/// `photoprep prepare …` read without argument parser, for the forms people type. Argument parser learns a command's
/// options by reflecting over its properties, and each type it meets sends the Swift runtime through every protocol
/// conformance record of the binary (about 12,600 in this one executable): 52 M of the 63 M instructions a whole
/// `prepare` of a 0.3 MP photo took. Whatever this reader is not sure of — no `prepare`, help, `--version`, an
/// unknown or repeated option, `--upload`, a missing or unreadable value, a value or input starting with `-`, `--`,
/// settings that fail validation — it declines (nil), and argument parser reads the command line as before, with its
/// messages. `PrepareCommandLineTests` holds the two readers equal.
package enum PrepareCommandLine {
    /// The settings `arguments` (without the program's name) ask for, or nil to leave them to argument parser.
    package static func read(_ arguments: [String]) -> PrepareSettings? {
        guard arguments.first == "prepare" else { return nil }
        var settings = PrepareSettings(inputs: [], out: "")
        var given = Set<String>()
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("-") else {
                settings.inputs.append(argument)
                continue
            }
            var name = argument, attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let option = options[shortNames[name] ?? name], given.insert(option.name).inserted else { return nil }
            switch option.kind {
            case .flag(let set):
                guard attached == nil else { return nil }
                set(&settings)
            case .value(let set):
                // A value may start with "-" when attached (`--focus=-0.5,0.25`), as argument parser reads it.
                guard let value = attached ?? rest.popFirst(), !value.isEmpty, attached != nil || !value.hasPrefix("-"),
                    set(&settings, value)
                else { return nil }
            }
        }
        guard !settings.inputs.isEmpty, given.contains("--out"), (try? settings.validate()) != nil else { return nil }
        return settings
    }

    /// Every option of `PrepareArguments` (`--upload` and its options are argument parser's).
    package static var names: Set<String> { Set(options.keys).union(shortNames.keys) }

    private static let shortNames = ["-o": "--out", "-j": "--jobs", "-q": "--quiet"]

    private struct Option: Sendable {
        enum Kind: Sendable {
            case flag(@Sendable (inout PrepareSettings) -> Void)
            /// Sets the value read from the argument; false when the value is not one the option takes.
            case value(@Sendable (inout PrepareSettings, String) -> Bool)
        }
        let name: String
        let kind: Kind
    }

    /// How argument parser reads each type: `Int(_:)`, `Double(_:)`, `init?(rawValue:)`, `init?(argument:)`.
    private static let options: [String: Option] = {
        let list: [Option] = [
            Option(name: "--out", kind: .value { $0.out = $1; return true }),
            Option(name: "--jobs", kind: .value { read(Int($1), into: &$0.jobs) }),
            Option(name: "--report", kind: .value { $0.report = $1; return true }),
            Option(name: "--quiet", kind: .flag { $0.quiet = true }),
            Option(name: "--json", kind: .flag { $0.json = true }),
            Option(name: "--force", kind: .flag { $0.force = true }),
            Option(name: "--shard", kind: .value { read(Shard(argument: $1), into: &$0.shard) }),
            Option(name: "--thumbnails", kind: .value { read(ThumbnailEdges(argument: $1)?.edges, into: &$0.thumbnails) }),
            Option(name: "--webp-thumbnails", kind: .flag { $0.webpThumbnails = true }),
            Option(name: "--square-thumbnails", kind: .flag { $0.squareThumbnails = true }),
            Option(name: "--focus", kind: .value { read(FocalPoint(parsing: $1), into: &$0.focus) }),
            Option(name: "--preset", kind: .value { read(PrepareOptions.Preset(rawValue: $1), into: &$0.pipeline.preset) }),
            Option(name: "--max-edge", kind: .value { read(Int($1), into: &$0.pipeline.maxEdge) }),
            Option(name: "--max-bytes", kind: .value { read(ByteSize(argument: $1), into: &$0.pipeline.maxBytes) }),
            Option(name: "--quality", kind: .value { read(QualityTarget($1), into: &$0.pipeline.quality) }),
            Option(name: "--max-quality", kind: .value { read(Int($1), into: &$0.pipeline.maxQuality) }),
            Option(name: "--background", kind: .value { read(HexColor(argument: $1), into: &$0.pipeline.background) }),
            Option(name: "--strip-all", kind: .flag { $0.pipeline.stripAll = true }),
            Option(name: "--shrink-margin", kind: .value { read(Double($1), into: &$0.pipeline.shrinkMargin) }),
            Option(name: "--strict", kind: .flag { $0.pipeline.strict = true }),
            Option(name: "--max-memory", kind: .value { read(ByteSize(argument: $1), into: &$0.pipeline.maxMemory) }),
            Option(name: "--decoding-threads", kind: .value { read(Int($1), into: &$0.pipeline.decodingThreads) }),
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
    }()

    private static func read<Value>(_ value: Value?, into setting: inout Value) -> Bool {
        guard let value else { return false }
        setting = value
        return true
    }

    private static func read<Value>(_ value: Value?, into setting: inout Value?) -> Bool {
        read(value.map(Optional.some), into: &setting)
    }
}
